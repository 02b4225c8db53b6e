-- PLACEHOLDER on branch lambda only: tern needs contiguous migration numbers,
-- and the outbox branch (issue 3) owns 002_outbox.sql. This file is replaced by
-- that branch's file when outbox is merged; it creates nothing.
SELECT 1;
