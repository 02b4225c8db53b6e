-- The record the Brief is built from (schema app) and the Brief rail's
-- ledger (schema ops). Every timestamp is written by the database clock.

CREATE SCHEMA IF NOT EXISTS app;
CREATE SCHEMA IF NOT EXISTS ops;

CREATE TABLE app.firms (
    firm_id    uuid PRIMARY KEY,
    name       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE app.matters (
    firm_id    uuid NOT NULL REFERENCES app.firms (firm_id),
    matter_id  uuid NOT NULL,
    title      text NOT NULL DEFAULT '',
    status     text NOT NULL DEFAULT 'open' CONSTRAINT matters_status_valid CHECK (status IN ('open', 'closed')),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (firm_id, matter_id),
    -- A matter id names one matter across firms, so a fact naming a matter
    -- under the wrong firm is detectable rather than silently a new matter.
    CONSTRAINT matters_matter_id_unique UNIQUE (matter_id)
);

CREATE TABLE app.documents (
    document_id    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    firm_id        uuid NOT NULL,
    matter_id      uuid NOT NULL,
    name           text NOT NULL CONSTRAINT documents_name_present CHECK (length(name) BETWEEN 1 AND 512),
    pages          text[] NOT NULL DEFAULT '{}',
    page_count     integer GENERATED ALWAYS AS (coalesce(array_length(pages, 1), 0)) STORED,
    content_sha256 text NOT NULL CONSTRAINT documents_sha256_hex CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
    note           text NOT NULL DEFAULT '',
    uploaded_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id)
);
CREATE INDEX documents_matter_idx ON app.documents (firm_id, matter_id, uploaded_at);

-- One ledger row per matter. Rows are never deleted: a re-created row would
-- re-issue fencing tokens.
CREATE TABLE ops.matter_frame_jobs (
    firm_id              uuid NOT NULL,
    matter_id            uuid NOT NULL,
    requested_generation bigint NOT NULL DEFAULT 0,  -- demands recorded
    claimed_generation   bigint NOT NULL DEFAULT 0,  -- the fencing token
    target_generation    bigint NOT NULL DEFAULT 0,  -- requested_generation the current/last claim covers
    built_generation     bigint NOT NULL DEFAULT 0,  -- target_generation of the last landed frame
    run_status           text NOT NULL DEFAULT 'idle',
    claimed_at           timestamptz,                -- lease start or last heartbeat
    claimed_by           text NOT NULL DEFAULT '',
    attempts             integer NOT NULL DEFAULT 0, -- claims since the last landed frame
    not_before           timestamptz,                -- backoff after a failed attempt
    last_error           text NOT NULL DEFAULT '',
    demand_since         timestamptz,                -- oldest demand not yet built (lower bound)
    last_demanded_at     timestamptz,
    rebuild_needed       boolean GENERATED ALWAYS AS (requested_generation > target_generation) STORED,
    PRIMARY KEY (firm_id, matter_id),
    FOREIGN KEY (firm_id, matter_id) REFERENCES app.matters (firm_id, matter_id),
    CONSTRAINT jobs_status_valid CHECK (run_status IN ('idle', 'running', 'quarantined')),
    CONSTRAINT jobs_generations_ordered CHECK (
        0 <= built_generation AND built_generation <= target_generation
        AND target_generation <= requested_generation),
    CONSTRAINT jobs_token_nonnegative CHECK (claimed_generation >= 0),
    CONSTRAINT jobs_running_has_lease CHECK (run_status <> 'running' OR claimed_at IS NOT NULL),
    CONSTRAINT jobs_not_running_target_built CHECK (run_status = 'running' OR target_generation = built_generation),
    CONSTRAINT jobs_attempts_nonnegative CHECK (attempts >= 0)
);
-- The sweeper's scan: rows that are behind, or holding a lease.
CREATE INDEX matter_frame_jobs_sweep_idx ON ops.matter_frame_jobs (claimed_at)
    WHERE run_status = 'running' OR requested_generation > built_generation;

-- One row per landed build: the Brief's versions. The newest is current.
CREATE TABLE ops.matter_frames (
    frame_id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    firm_id           uuid NOT NULL,
    matter_id         uuid NOT NULL,
    token             bigint NOT NULL,
    target_generation bigint NOT NULL,
    fingerprint       text NOT NULL,
    builder           text NOT NULL,
    model_invoked     boolean NOT NULL,
    body              jsonb NOT NULL,
    built_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (firm_id, matter_id) REFERENCES ops.matter_frame_jobs (firm_id, matter_id),
    CONSTRAINT matter_frames_one_per_token UNIQUE (firm_id, matter_id, token)
);

-- One row per claim: the attempt on-call debugs.
CREATE TABLE ops.matter_frame_runs (
    run_id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    firm_id           uuid NOT NULL,
    matter_id         uuid NOT NULL,
    token             bigint NOT NULL,
    target_generation bigint NOT NULL,
    worker_id         text NOT NULL,
    outcome           text NOT NULL DEFAULT 'claimed',
    claimed_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at       timestamptz,
    error             text NOT NULL DEFAULT '',
    FOREIGN KEY (firm_id, matter_id) REFERENCES ops.matter_frame_jobs (firm_id, matter_id),
    CONSTRAINT matter_frame_runs_one_per_token UNIQUE (firm_id, matter_id, token),
    CONSTRAINT matter_frame_runs_outcome_valid CHECK (
        outcome IN ('claimed', 'landed', 'fenced', 'superseded', 'failed', 'lease_expired', 'quarantined'))
);
CREATE INDEX matter_frame_runs_open_idx ON ops.matter_frame_runs (firm_id, matter_id) WHERE outcome = 'claimed';

-- Roll back (only on a database with nothing to keep: it destroys the record
-- and the ledger; stop every function and railctl first):
--   DROP SCHEMA ops CASCADE;
--   DROP SCHEMA app CASCADE;
