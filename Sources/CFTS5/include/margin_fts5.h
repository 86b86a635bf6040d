#ifndef MARGIN_FTS5_H
#define MARGIN_FTS5_H

struct sqlite3;

/// Registers two FTS5 auxiliary functions on a connection; returns SQLite's result code.
///
/// `margin_phrase_rank(table)`: FTS5's bm25 for a query of one phrase, without the phrase's
/// weight (IDF). With one phrase that weight is the same for every row, so the order is bm25's;
/// bm25 works it out by reading every row that holds the phrase, a second pass over the index
/// (for a phrase ending in a prefix, a merge of every word starting with it).
///
/// `margin_phrase_hits(table)`: what bm25 needs of the row, as a blob of integers in the
/// machine's byte order: the table's rows and tokens (8 bytes each), the row's tokens (4 bytes),
/// then each phrase's hits in the row (4 bytes each). For a query of phrases joined by OR, the
/// rows holding phrase i are the matching rows with hits of it: one pass gives bm25's weights
/// too (`PhraseRanking`).
int margin_fts5_register(struct sqlite3 *db);

/// Turns off SQLite's memory statistics, which every allocation of every connection updates
/// under one process-wide mutex (connections reading side by side wait on it). Before SQLite
/// starts (the first connection) only; returns SQLite's result code (SQLITE_MISUSE after).
int margin_sqlite_without_memory_statistics(void);

#endif
