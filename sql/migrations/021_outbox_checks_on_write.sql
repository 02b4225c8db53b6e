-- The outbox's content CHECKs are checked when a fact is written, not at
-- every relay mark (issue 21).
--
-- PostgreSQL evaluates every CHECK constraint of a table on every UPDATE of
-- a row, whichever columns it sets. The relay's published mark sets
-- published_at (and clears next_attempt_at) and yet paid, per row, for the
-- event-name grammar (a regular expression) and the payload's two checks
-- (its jsonb type and its text rendered to be measured): measured in a
-- throwaway database, 5,000 heap-only marks took 66-75 ms with the CHECKs
-- and 21-24 ms without them (docs/benchmarks.md, "Relay: heap-only
-- marks").
--
-- The same three conditions, character for character as in the migration
-- that created the outbox, move to a BEFORE INSERT OR UPDATE OF
-- event_name, payload trigger: every insert and every update that sets
-- either column is checked as before, with the same error (SQLSTATE
-- 23514, check_violation, naming the same constraint); an update of other
-- columns is not. The trigger is created before the CHECKs are dropped, so
-- no write goes unchecked in between. Existing rows already satisfy them.
-- The cheap CHECKs (trace header length, attempts, published-or-parked)
-- stay. The same trigger stamps an inserted row's relay_xid with its
-- writer's transaction id (the column's default alone would let an insert
-- name a lower one and hide its fact below the relay's cursor).
--
-- One transaction: the trigger and the drops commit together. The locks
-- (the trigger's, then ACCESS EXCLUSIVE for the drops, both brief) are
-- taken under a 5 s lock_timeout so the migration never queues writers
-- behind a long transaction; if it times out, run it again.

SET LOCAL lock_timeout = '5s';

CREATE FUNCTION ops.check_outbox_fact() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT (length(NEW.event_name) <= 128
            AND NEW.event_name ~ '^[a-z][a-z0-9]*(_[a-z0-9]+)*\.([a-z][a-z0-9]*_)*([a-z]*[a-df-z]ed|(re|un|up|out|over|under|with|mis|fore|pre|co)?(agreed|freed|guaranteed|decreed|arisen|awoken|beaten|begun|bent|bitten|blown|bought|bound|broken|brought|built|caught|chosen|dealt|done|drawn|driven|dug|eaten|fallen|fed|felt|fled|flown|forbidden|forgiven|forgotten|fought|found|frozen|given|gone|gotten|grown|held|hidden|hung|kept|known|laid|led|left|lent|lost|made|meant|met|paid|proven|ridden|risen|said|seen|sent|shaken|shown|sold|sought|spent|spoken|stolen|stood|struck|stuck|sworn|taken|taught|thought|thrown|told|torn|understood|won|woken|worn|written))$'
            AND NEW.event_name !~ '[._](bed|embed|imbed|red|shred|sled)$') THEN
        RAISE EXCEPTION 'new row for relation "domain_event_outbox" violates check constraint "outbox_event_name_is_past_tense_fact"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_event_name_is_past_tense_fact',
                  SCHEMA = 'ops', TABLE = 'domain_event_outbox', COLUMN = 'event_name';
    END IF;
    IF jsonb_typeof(NEW.payload) <> 'object' THEN
        RAISE EXCEPTION 'new row for relation "domain_event_outbox" violates check constraint "outbox_payload_is_object"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_payload_is_object',
                  SCHEMA = 'ops', TABLE = 'domain_event_outbox', COLUMN = 'payload';
    END IF;
    IF octet_length(NEW.payload::text) > 4096 THEN
        RAISE EXCEPTION 'new row for relation "domain_event_outbox" violates check constraint "outbox_payload_at_most_4kb"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'outbox_payload_at_most_4kb',
                  SCHEMA = 'ops', TABLE = 'domain_event_outbox', COLUMN = 'payload';
    END IF;
    -- A new fact is read by the relay at its writer's transaction id,
    -- whatever the insert said: a writer that set a low relay_xid would
    -- put its fact below the relay's cursor, where no pass reads it and no
    -- gauge counts it.
    IF TG_OP = 'INSERT' THEN
        NEW.relay_xid := pg_catalog.pg_current_xact_id();
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION ops.check_outbox_fact() FROM PUBLIC;
-- BEFORE triggers fire in name order: this one last, after any that
-- changes the row.
CREATE TRIGGER domain_event_outbox_valid_fact
    BEFORE INSERT OR UPDATE OF event_name, payload ON ops.domain_event_outbox
    FOR EACH ROW EXECUTE FUNCTION ops.check_outbox_fact();

ALTER TABLE ops.domain_event_outbox
    DROP CONSTRAINT outbox_event_name_is_past_tense_fact,
    DROP CONSTRAINT outbox_payload_is_object,
    DROP CONSTRAINT outbox_payload_at_most_4kb;

-- Roll back (the CHECKs are re-added NOT VALID: the trigger held every row
-- written meanwhile to them, and VALIDATE CONSTRAINT can follow off-peak):
--   ALTER TABLE ops.domain_event_outbox
--       ADD CONSTRAINT outbox_event_name_is_past_tense_fact CHECK (...as in the migration that created the outbox...) NOT VALID,
--       ADD CONSTRAINT outbox_payload_is_object CHECK (jsonb_typeof(payload) = 'object') NOT VALID,
--       ADD CONSTRAINT outbox_payload_at_most_4kb CHECK (octet_length(payload::text) <= 4096) NOT VALID;
--   DROP TRIGGER domain_event_outbox_valid_fact ON ops.domain_event_outbox;
--   DROP FUNCTION ops.check_outbox_fact();
-- and set public.brief_rail_schema_version's version back by one.
