-- The refresh reads a document's stored submissions a page at a time in row order (lib/ingest/
-- submissions.ts): keyed by row number within the document, each page is a range of this index
-- instead of a sort of the document's every row. It also serves every lookup by document alone, so
-- it replaces the index on the document.
CREATE INDEX IF NOT EXISTS source_submission_document_row ON source_submission (document_id, row_number);
DROP INDEX IF EXISTS source_submission_document;
