-- The age of the oldest unserved demand, exactly (docs/ARCHITECTURE.md,
-- "Demand clock"), and frame bodies stored once per content.
--
-- uncovered_since: arrival (database clock) of the oldest demand whose
-- generation is above target_generation, i.e. not covered by the current
-- or last claim. NULL exactly when requested_generation = target_generation.
-- Demand sets it if NULL; a claim clears it (its target takes everything
-- requested); a commit moves it into demand_since (the follow-up's demand
-- is the oldest unbuilt one); a failure or a quarantine, which hand the
-- target back, set it to demand_since (every unbuilt demand is uncovered
-- again). demand_since keeps its meaning: arrival of the oldest demand not
-- yet built, NULL exactly when requested_generation = built_generation.
--
-- Rows already behind get a conservative value: demand_since (never later
-- than the true arrival, so the gauge may over-report once, never under).

ALTER TABLE ops.matter_frame_jobs ADD COLUMN uncovered_since timestamptz;

UPDATE ops.matter_frame_jobs
   SET uncovered_since = coalesce(demand_since, last_demanded_at, clock_timestamp())
 WHERE requested_generation > target_generation;

-- Frame bodies, content-addressed: a build whose body is byte-identical to
-- a stored one (an unchanged fingerprint reuses the previous body) stores
-- a reference, not another copy. The frame's body column becomes nullable;
-- readers take coalesce(frame body, stored body).
CREATE TABLE ops.matter_frame_bodies (
    firm_id     uuid NOT NULL,
    matter_id   uuid NOT NULL,
    body_sha256 text NOT NULL CONSTRAINT frame_bodies_sha256_hex CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
    body        jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- The last commit that stored or re-used this body. Pruning deletes a
    -- body only when no frame references it and used_at is older than the
    -- retention: a commit re-using it updates used_at under the row lock,
    -- so a racing prune re-checks and keeps it.
    used_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (firm_id, matter_id, body_sha256),
    FOREIGN KEY (firm_id, matter_id) REFERENCES ops.matter_frame_jobs (firm_id, matter_id)
);

ALTER TABLE ops.matter_frames ADD COLUMN body_sha256 text;
ALTER TABLE ops.matter_frames ALTER COLUMN body DROP NOT NULL;
ALTER TABLE ops.matter_frames ADD CONSTRAINT matter_frames_body_or_ref
    CHECK (body IS NOT NULL OR body_sha256 IS NOT NULL);

-- Roll back: DROP TABLE ops.matter_frame_bodies after copying each
-- referenced body back (UPDATE ops.matter_frames f SET body = b.body FROM
-- ops.matter_frame_bodies b WHERE f.body IS NULL AND ...), then
-- ALTER TABLE ops.matter_frames DROP CONSTRAINT matter_frames_body_or_ref,
-- ALTER COLUMN body SET NOT NULL, DROP COLUMN body_sha256; and
-- ALTER TABLE ops.matter_frame_jobs DROP COLUMN uncovered_since.
