"""The importer of the Lakretz et al. (2021) public release: `format` (format facts), `logs` (log parsing),
`table` (table reading), `match`, `rows` (trial-table rows), `release` (the import, sessions and summary),
`cli` (the command, registered through the study's `IMPORTERS`)."""
