-- Placeholder so tern sees no gap before 007 on this branch.
-- DROP AT MERGE: the real 005 migration is another change's.
SELECT 1;
