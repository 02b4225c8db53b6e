-- Placeholder so tern sees no gap before 010 on this branch.
-- DROP AT MERGE: the real 007 migration is another change's.
SELECT 1;
