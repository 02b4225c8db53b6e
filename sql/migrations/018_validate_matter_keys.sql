-- Validate the composite foreign keys the previous migration added NOT
-- VALID (outbox, trigger inbox, demand and nudge records -> app.matters).
-- VALIDATE CONSTRAINT scans each table under SHARE UPDATE EXCLUSIVE, which
-- blocks neither inserts nor updates, and app.matters under ROW SHARE; new
-- rows have been checked since the constraint was added. A separate
-- migration, so the scans run after the previous one's brief locks were
-- released (tern runs each file in its own transaction).
--
-- If a VALIDATE fails, rows name a matter that does not exist under their
-- firm (a fact recorded before the key, such as a forged railctl emit).
-- Find them with, for example:
--   SELECT o.event_id, o.firm_id, o.matter_id, o.event_name FROM ops.domain_event_outbox o
--   WHERE o.matter_id IS NOT NULL
--     AND NOT EXISTS (SELECT 1 FROM app.matters m WHERE (m.firm_id, m.matter_id) = (o.firm_id, o.matter_id));
-- decide what they are (they created demand for no matter of theirs), delete
-- or correct them, and run the migration again.

ALTER TABLE ops.domain_event_outbox VALIDATE CONSTRAINT domain_event_outbox_matter_fk;
ALTER TABLE ops.trigger_inbox VALIDATE CONSTRAINT trigger_inbox_matter_fk;
ALTER TABLE ops.matter_demands VALIDATE CONSTRAINT matter_demands_matter_fk;
ALTER TABLE ops.matter_nudges VALIDATE CONSTRAINT matter_nudges_matter_fk;

-- Roll back: nothing to undo on its own (a validated key is the same key);
-- rolling back the previous migration drops the constraints.
