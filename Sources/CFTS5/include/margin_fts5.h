#ifndef MARGIN_FTS5_H
#define MARGIN_FTS5_H

struct sqlite3;

/// Registers the FTS5 auxiliary function `margin_phrase_rank(table)` on a connection: FTS5's
/// bm25 for a query of one phrase, without the phrase's weight (IDF). With one phrase that
/// weight is the same for every row, so the order is bm25's; bm25 works it out by reading every
/// row that holds the phrase, a second pass over the index (for a phrase ending in a prefix, a
/// merge of every word starting with it). Returns SQLite's result code.
int margin_fts5_register(struct sqlite3 *db);

#endif
