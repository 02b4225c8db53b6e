-- Placeholder so tern sees no gap before 015 on this branch.
-- DROP AT MERGE: the real 014 migration is another change's.
SELECT 1;
