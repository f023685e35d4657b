-- What an upload does with two different values for one cell inside its file (docs/decisions.md,
-- "Conflicts inside one upload"): `last` keeps the later line (the contract's rule and the default),
-- `first` the earlier, `reject` writes neither. Chosen at upload; every conflict is reported whatever
-- the choice. Written to run twice, as every migration from 010 on.
ALTER TABLE source_doc ADD COLUMN IF NOT EXISTS conflict varchar(6) NOT NULL DEFAULT 'last'
  CHECK (conflict IN ('reject', 'first', 'last'));
