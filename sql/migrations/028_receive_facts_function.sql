-- The trigger's whole batch in one statement (issue 21).
--
-- The trigger (pkg/rail Trigger.Handle) records each matter of an SQS batch
-- in a transaction of its own: BEGIN, the inbox statement (pkg/postgres
-- inboxSQL: verify each fact against the outbox, insert the new ones), the
-- demand (ops.record_demand), COMMIT. Four round trips and one commit per
-- matter, up to ten matters a batch: on the end-to-end path the trigger,
-- not the build, was the rail's largest cost per upload.
--
-- ops.receive_facts does the same for every matter of the batch in one
-- call: one inbox statement over all the facts (each verified against the
-- outbox under its own firm, matter and name, exactly as inboxSQL does for
-- one matter), then one statement giving each matter with new facts one
-- demand, written as ops.record_demand writes it. Everything commits
-- together or not at all. Rows are locked in one order (inbox rows by firm, matter, event
-- id; job rows by firm, matter), so two batches over the same matters
-- wait for each other rather than deadlock.
--
-- It refuses what the matter-by-matter path treats as its own case: a
-- demand that finds no matter under the firm (only possible when a matter
-- went away between its fact and now: a new fact is one the outbox holds,
-- and the outbox holds facts only of existing matters) raises, so nothing
-- of the batch is written and the trigger falls back to recording matter
-- by matter, which acknowledges those facts without demand. Any other
-- error (the same event id twice in one batch under two matters, a lock
-- timeout) fails the call the same way, and the fallback isolates it to
-- the matter it belongs to.
--
-- SECURITY INVOKER: the trigger's own grants (INSERT on ops.trigger_inbox,
-- SELECT on the outbox, EXECUTE on ops.record_demand). EXECUTE for the
-- trigger only.
--
-- Parameters: parallel arrays, one element per fact: event id, firm,
-- matter (uuids as text), event name, trace header. Returns one row per
-- fact (r_event_id, r_verdict: fresh, duplicate, or the refusal reason;
-- the demand columns null) and one row per matter given demand (r_event_id
-- null, r_verdict 'demand', the matter's status, requested generation and
-- run status as ops.record_demand returns them).

CREATE FUNCTION ops.receive_facts(text[], text[], text[], text[], text[])
    RETURNS TABLE (r_event_id uuid, r_verdict text, r_firm_id uuid, r_matter_id uuid,
                   r_status text, r_requested_generation bigint, r_run_status text)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
    ids      uuid[];
    firms    uuid[];
    matters  uuid[];
    verdicts text[];
    traces   text[];
    g        record;
BEGIN
    WITH e AS (
        SELECT x.event_id::uuid AS event_id, x.firm_id::uuid AS firm_id, x.matter_id::uuid AS matter_id,
               x.event_name, x.trace, x.ord
        FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]),
                        pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]))
             WITH ORDINALITY AS x (event_id, firm_id, matter_id, event_name, trace, ord)
    ), v AS (
        SELECT e.*, EXISTS (
            SELECT 1 FROM ops.domain_event_outbox o
            WHERE o.event_id = e.event_id AND o.firm_id = e.firm_id AND o.matter_id = e.matter_id
              AND o.event_name = e.event_name
        ) AS confirmed
        FROM e
    ), ins AS (
        INSERT INTO ops.trigger_inbox AS i (event_id, firm_id, matter_id, event_name)
        SELECT v.event_id, v.firm_id, v.matter_id, v.event_name FROM v WHERE v.confirmed
        ORDER BY v.firm_id, v.matter_id, v.event_id
        ON CONFLICT (event_id) DO UPDATE SET received_at = i.received_at
            WHERE (i.firm_id, i.matter_id, i.event_name) = (EXCLUDED.firm_id, EXCLUDED.matter_id, EXCLUDED.event_name)
        RETURNING i.event_id, i.firm_id, i.matter_id, i.event_name, i.xmax::text = '0' AS inserted
    )
    SELECT pg_catalog.array_agg(v.event_id ORDER BY v.ord), pg_catalog.array_agg(v.firm_id ORDER BY v.ord),
           pg_catalog.array_agg(v.matter_id ORDER BY v.ord), pg_catalog.array_agg(v.trace ORDER BY v.ord),
           pg_catalog.array_agg(
               CASE WHEN ins.inserted THEN 'fresh'
                    WHEN ins.event_id IS NOT NULL THEN 'duplicate'
                    WHEN v.confirmed THEN 'conflict'
                    WHEN EXISTS (SELECT 1 FROM ops.trigger_inbox i
                                 WHERE i.event_id = v.event_id
                                   AND (i.firm_id, i.matter_id, i.event_name) = (v.firm_id, v.matter_id, v.event_name))
                        THEN 'duplicate'
                    ELSE 'unconfirmed' END ORDER BY v.ord)
    INTO ids, firms, matters, traces, verdicts
    -- Joined on all four: a batch can hold one event id twice, under its
    -- own matter and forged under another; the forged one is not the row
    -- inserted or found, whatever the order.
    FROM v LEFT JOIN ins ON (ins.event_id, ins.firm_id, ins.matter_id, ins.event_name) = (v.event_id, v.firm_id, v.matter_id, v.event_name);

    RETURN QUERY SELECT x.id, x.verdict, x.firm, x.matter, NULL::text, NULL::bigint, NULL::text
        FROM ROWS FROM (pg_catalog.unnest(ids), pg_catalog.unnest(verdicts), pg_catalog.unnest(firms), pg_catalog.unnest(matters))
             AS x (id, verdict, firm, matter);

    -- The demands: for each matter with new facts, one demand of n, written
    -- as ops.record_demand writes one (the job row's upsert, the demand's
    -- record with its facts' ids, the oldest fact's time and the first new
    -- fact's trace header), for all the batch's matters in one statement
    -- (TestTriggerBatchRecordsWhatMatterByMatterDoes holds the two to the
    -- same rows).
    FOR g IN
        WITH f AS (
            SELECT x.firm, x.matter, pg_catalog.array_agg(x.id ORDER BY x.ord) AS fresh,
                   (pg_catalog.array_agg(x.trace ORDER BY x.ord) FILTER (WHERE x.trace <> ''))[1] AS trace
            FROM ROWS FROM (pg_catalog.unnest(ids), pg_catalog.unnest(verdicts), pg_catalog.unnest(firms), pg_catalog.unnest(matters),
                            pg_catalog.unnest(traces)) WITH ORDINALITY AS x (id, verdict, firm, matter, trace, ord)
            WHERE x.verdict = 'fresh'
            GROUP BY x.firm, x.matter
        ), m AS (
            SELECT f.*, mt.status FROM f JOIN app.matters mt ON mt.firm_id = f.firm AND mt.matter_id = f.matter
        ), up AS (
            INSERT INTO ops.matter_frame_jobs AS j
                (firm_id, matter_id, requested_generation, demand_since, uncovered_since, last_demanded_at)
            SELECT m.firm, m.matter, pg_catalog.cardinality(m.fresh), clock_timestamp(), clock_timestamp(), clock_timestamp()
            FROM m ORDER BY m.firm, m.matter -- open or closed: a closed matter's demand is recorded and held
            ON CONFLICT (firm_id, matter_id) DO UPDATE SET
                requested_generation = j.requested_generation + EXCLUDED.requested_generation,
                demand_since         = coalesce(j.demand_since, EXCLUDED.demand_since),
                uncovered_since      = coalesce(j.uncovered_since, EXCLUDED.uncovered_since),
                last_demanded_at     = EXCLUDED.last_demanded_at,
                run_status = CASE WHEN j.run_status = 'quarantined' THEN 'idle' ELSE j.run_status END,
                attempts   = CASE WHEN j.run_status = 'quarantined' THEN 0 ELSE j.attempts END,
                not_before = CASE WHEN j.run_status = 'quarantined' THEN NULL ELSE j.not_before END
            RETURNING j.firm_id, j.matter_id, j.requested_generation, j.run_status
        ), log AS (
            INSERT INTO ops.matter_demands
                (firm_id, matter_id, generation, n, source, event_ids, occurred_at, trace_header)
            SELECT up.firm_id, up.matter_id, up.requested_generation, pg_catalog.cardinality(m.fresh), 'fact', m.fresh,
                   coalesce((SELECT min((SELECT o.occurred_at FROM ops.domain_event_outbox o WHERE o.event_id = e.event_id))
                             FROM pg_catalog.unnest(m.fresh) AS e(event_id)), clock_timestamp()),
                   left(coalesce(m.trace, ''), 500)
            FROM up JOIN m ON m.firm = up.firm_id AND m.matter = up.matter_id
            ON CONFLICT (firm_id, matter_id, generation) DO NOTHING
        )
        SELECT f.firm, f.matter, m.status, up.requested_generation, up.run_status
        FROM f LEFT JOIN m ON m.firm = f.firm AND m.matter = f.matter
               LEFT JOIN up ON up.firm_id = f.firm AND up.matter_id = f.matter
        ORDER BY f.firm, f.matter
    LOOP
        IF g.requested_generation IS NULL THEN
            RAISE EXCEPTION 'receive_facts: no matter % under firm % (record this batch matter by matter)', g.matter, g.firm
                USING ERRCODE = 'no_data_found';
        END IF;
        r_event_id := NULL;
        r_verdict := 'demand';
        r_firm_id := g.firm;
        r_matter_id := g.matter;
        r_status := g.status;
        r_requested_generation := g.requested_generation;
        r_run_status := g.run_status;
        RETURN NEXT;
    END LOOP;
END
$fn$;

REVOKE ALL ON FUNCTION ops.receive_facts(text[], text[], text[], text[], text[]) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_trigger') THEN
        GRANT EXECUTE ON FUNCTION ops.receive_facts(text[], text[], text[], text[], text[]) TO brief_trigger;
    END IF;
END
$$;

-- Roll back: deploy the release before this first (its trigger records
-- matter by matter), then
--   DROP FUNCTION ops.receive_facts(text[], text[], text[], text[], text[]);
-- and set public.brief_rail_schema_version's version back by one.
