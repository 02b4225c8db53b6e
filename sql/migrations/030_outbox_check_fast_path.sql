-- The outbox's write check skips its grammar's regular expression for
-- the rail's own fact names (issue 21).
--
-- Migration 021's trigger tests every new fact's name against the
-- past-tense grammar. PostgreSQL's regular expression engine takes that
-- pattern (an alternation of some hundred irregular participles) slowly:
-- measured in a throwaway database, 16-43 us a match depending on the
-- minute (10,000 matches 158-436 ms against 3-24 ms for an equality);
-- 20,000 inserts of frame.built in one statement took 326-391 ms with
-- this check, of a name the grammar must test 484-540 ms, and with the
-- check disabled 250-258 ms (docs/benchmarks.md, "Key-addressed plans,
-- and the outbox check's own names"). Every commit writes one
-- frame.built fact a frame, every upload one document.uploaded.
--
-- The five names the rail itself writes (pkg/rail's Fact constants) are
-- compared first; any other name is held to the grammar exactly as
-- before, with the same error. The five are accepted by the grammar
-- (TestOutboxFastPathNamesPassTheGrammar holds them to it, in the
-- database and in Go), so no name is accepted that was refused: the
-- verdicts are unchanged, which FuzzEventName checks
-- against Go's copy of the grammar. The payload checks and the relay_xid
-- stamp run for every row, as before.

CREATE OR REPLACE FUNCTION ops.check_outbox_fact() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- The rail's own names, each accepted by the grammar below (a test
    -- holds them to it), skip the grammar's regular expression.
    IF NEW.event_name NOT IN ('frame.built', 'document.uploaded', 'document.removed', 'matter.created',
                              'brief.regeneration_requested')
       AND NOT (length(NEW.event_name) <= 128
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

-- Roll back: re-create the function as migration 021 has it (CREATE OR
-- REPLACE FUNCTION with 021's body), and set
-- public.brief_rail_schema_version's version back by one.
