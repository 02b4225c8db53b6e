-- The transactional outbox: a fact about the record commits in the same
-- transaction as the record it describes, and the relay puts it on the
-- event bus afterwards (at least once). See docs/relay.md.

CREATE TABLE ops.domain_event_outbox (
    event_id         uuid PRIMARY KEY DEFAULT gen_random_uuid(), -- consumers dedupe on it
    firm_id          uuid NOT NULL,
    matter_id        uuid,
    event_name       text NOT NULL,
    payload          jsonb NOT NULL DEFAULT '{}',                 -- ids only
    occurred_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    published_at     timestamptz,                                 -- null until PutEvents accepted it
    trace_header     text NOT NULL DEFAULT '',
    publish_attempts integer NOT NULL DEFAULT 0,                  -- failed attempts so far
    last_error       text NOT NULL DEFAULT '',
    next_attempt_at  timestamptz,                                 -- backoff; null = due now
    parked_at        timestamptz,                                 -- gave up: visible, never retried by itself

    -- The grammar (docs/relay.md; pkg/rail ValidEventName holds the same
    -- two expressions): lowercase snake_case noun, one dot, a snake_case
    -- verb phrase whose last word is a past participle: a regular one
    -- ending in -ed (not -eed), or one of a closed list of irregular ones,
    -- optionally prefixed. Verbs whose past looks like their present (set,
    -- put, read, run, ...) are refused: they cannot be told from a command.
    CONSTRAINT outbox_event_name_is_past_tense_fact CHECK (
        length(event_name) <= 128
        AND event_name ~ '^[a-z][a-z0-9]*(_[a-z0-9]+)*\.([a-z][a-z0-9]*_)*([a-z]*[a-df-z]ed|(re|un|up|out|over|under|with|mis|fore|pre|co)?(agreed|freed|guaranteed|decreed|arisen|awoken|beaten|begun|bent|bitten|blown|bought|bound|broken|brought|built|caught|chosen|dealt|done|drawn|driven|dug|eaten|fallen|fed|felt|fled|flown|forbidden|forgiven|forgotten|fought|found|frozen|given|gone|gotten|grown|held|hidden|hung|kept|known|laid|led|left|lent|lost|made|meant|met|paid|proven|ridden|risen|said|seen|sent|shaken|shown|sold|sought|spent|spoken|stolen|stood|struck|stuck|sworn|taken|taught|thought|thrown|told|torn|understood|won|woken|worn|written))$'
        AND event_name !~ '[._](bed|embed|imbed|red|shred|sled)$'),
    CONSTRAINT outbox_payload_is_object CHECK (jsonb_typeof(payload) = 'object'),
    CONSTRAINT outbox_payload_at_most_4kb CHECK (octet_length(payload::text) <= 4096),
    CONSTRAINT outbox_trace_header_short CHECK (length(trace_header) <= 500),
    CONSTRAINT outbox_attempts_nonnegative CHECK (publish_attempts >= 0),
    CONSTRAINT outbox_published_or_parked CHECK (published_at IS NULL OR parked_at IS NULL)
);

-- The drain: only unpublished, unparked rows, in the order the relay takes
-- them. Its size is the backlog, not the history.
CREATE INDEX domain_event_outbox_pending_idx ON ops.domain_event_outbox (occurred_at, event_id)
    WHERE published_at IS NULL AND parked_at IS NULL;

-- Retention: published rows by age.
CREATE INDEX domain_event_outbox_published_idx ON ops.domain_event_outbox (published_at)
    WHERE published_at IS NOT NULL;

-- On-call: parked rows.
CREATE INDEX domain_event_outbox_parked_idx ON ops.domain_event_outbox (parked_at)
    WHERE parked_at IS NOT NULL;

-- Roll back (stop the producers, let the relay drain the backlog to zero
-- first, or the unpublished facts are lost; then stop the relay):
--   DROP TABLE ops.domain_event_outbox;
