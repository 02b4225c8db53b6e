-- One lease for the relay, instead of one per row (issue 21).
--
-- Until this migration a relay pass leased every row it took
-- (relay_claim = the pass's id, next_attempt_at = the lease's end) and
-- then marked it published: two row versions per fact, each a non-HOT
-- update with its index entries. Now a relay holds one lease row: its
-- claim takes or renews the lease and reads the due rows in one
-- statement, without writing them; the published mark is the only write
-- a relayed fact gets. The lease's fencing token rises whenever a new
-- holder takes it; a relay's failure records and parking apply only while
-- its token is still the lease's (its published marks are unfenced: the
-- bus has the fact, whoever holds the lease). A relay that finds the
-- lease held by another publishes nothing that pass.
--
-- relay_claim is no longer written by anyone: the relay's UPDATE grant on
-- it is revoked (least privilege). The column stays (no table lock, and
-- the release before this one reads it). A relay of that release still
-- running after this migration has its claims refused (permission denied
-- on relay_claim: it fails loudly and publishes nothing) until the new
-- code replaces it, and a pass of it in flight at that moment loses its
-- marks (they clear relay_claim): those rows go out again, duplicates
-- that consumers dedupe on event_id; nothing is lost. A row it
-- left leased (next_attempt_at = its lease's end) is due again when that
-- lease ends, like a row backing off.
--
-- A small table of its own: no lock on the outbox.

CREATE TABLE ops.relay_lease (
    lease       text PRIMARY KEY CHECK (lease = 'outbox'),
    holder      uuid,                          -- the relay run holding it; null when released
    token       bigint NOT NULL DEFAULT 0,     -- fencing token: rises with every new holder
    lease_until timestamptz,                   -- the holder's lease ends (database clock)
    taken_at    timestamptz,                   -- when the holder took it
    takeovers   bigint NOT NULL DEFAULT 0,     -- leases taken from a holder that had not released it
    CONSTRAINT relay_lease_token_nonnegative CHECK (token >= 0)
);
INSERT INTO ops.relay_lease (lease) VALUES ('outbox');

-- The token never goes backwards, the owner's DML included (as the
-- ledger's generations, migration 017's refuse_generation_backwards).
CREATE FUNCTION ops.refuse_relay_token_backwards() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RAISE EXCEPTION 'relay lease token may not go backwards (% -> %)', OLD.token, NEW.token
        USING ERRCODE = 'check_violation';
END
$$;
REVOKE ALL ON FUNCTION ops.refuse_relay_token_backwards() FROM PUBLIC;
CREATE TRIGGER relay_lease_token_forward
    BEFORE UPDATE ON ops.relay_lease FOR EACH ROW
    WHEN (NEW.token < OLD.token)
    EXECUTE FUNCTION ops.refuse_relay_token_backwards();

DO $$
BEGIN
    -- relay: reads and writes its lease (its fenced failure records take
    -- the lease row FOR SHARE); on the outbox it no longer writes
    -- relay_claim.
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_relay') THEN
        GRANT SELECT ON ops.relay_lease TO brief_relay;
        GRANT UPDATE (holder, token, lease_until, taken_at, takeovers) ON ops.relay_lease TO brief_relay;
        REVOKE UPDATE (relay_claim) ON ops.domain_event_outbox FROM brief_relay;
    END IF;
    -- on-call sees who holds the lease (railctl outbox, docs/operations.md).
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'brief_oncall') THEN
        GRANT SELECT ON ops.relay_lease TO brief_oncall;
    END IF;
END
$$;

-- Roll back: deploy the relay of the release before this first (it leases
-- rows and ignores ops.relay_lease), then
--   GRANT UPDATE (relay_claim) ON ops.domain_event_outbox TO brief_relay;
--   DROP TABLE ops.relay_lease; DROP FUNCTION ops.refuse_relay_token_backwards();
-- and set public.brief_rail_schema_version's version back by one.
