-- Member search (GET /v1/projects/{id}/members?q=): a project's members by display name prefix,
-- case-insensitive, in name order. The C collation makes the prefix a byte range that this index
-- serves directly, filter and order both, so a page stays quick with a million members.
CREATE INDEX members_project_name ON members (project_id, (lower(display_name) COLLATE "C"), id);
