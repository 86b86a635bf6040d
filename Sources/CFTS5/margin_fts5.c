#include "margin_fts5.h"

#include <sqlite3.h>
#include <string.h>

/// What bm25 reads for a row: the table's rows and tokens, the row's tokens and its phrase hits.
static int row_counts(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_int64 *rows, sqlite3_int64 *total,
                      int *tokens, int *instances) {
    int rc = api->xRowCount(fts, rows);
    if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, total);
    if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, tokens);
    if (rc == SQLITE_OK) rc = api->xInstCount(fts, instances);
    return rc;
}

/// The row's score as FTS5's bm25 gives it (k1 = 1.2, b = 0.75, every column weighted 1),
/// divided by the phrase's IDF: -(f·(k1+1)) / (f + k1·(1 − b + b·D/avgdl)), f the phrase's
/// hits in the row, D the row's length in tokens, avgdl the average length.
static void phrase_rank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context, int count,
                        sqlite3_value **values) {
    (void)count;
    (void)values;
    sqlite3_int64 rows = 0, total = 0;
    int tokens = 0, hits = 0;
    int rc = row_counts(api, fts, &rows, &total, &tokens, &hits);
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(context, rc);
        return;
    }
    double average = rows > 0 ? (double)total / (double)rows : 1.0;
    if (average <= 0) average = 1.0;
    const double k1 = 1.2, b = 0.75;
    double f = (double)hits;
    double score = (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * (double)tokens / average));
    sqlite3_result_double(context, -1.0 * score);
}

/// What bm25 needs of the row (see `margin_fts5.h`): hits counted as bm25 counts them, one per
/// instance of a phrase.
static void phrase_hits(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context, int count,
                        sqlite3_value **values) {
    (void)count;
    (void)values;
    int phrases = api->xPhraseCount(fts);
    sqlite3_int64 rows = 0, total = 0;
    int tokens = 0, instances = 0;
    int rc = row_counts(api, fts, &rows, &total, &tokens, &instances);
    int size = 20 + 4 * phrases;
    unsigned char *blob = rc == SQLITE_OK ? sqlite3_malloc(size) : 0;
    if (rc == SQLITE_OK && blob == 0) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        memcpy(blob, &rows, 8);
        memcpy(blob + 8, &total, 8);
        memcpy(blob + 16, &tokens, 4);
        memset(blob + 20, 0, 4 * (size_t)phrases);
    }
    for (int index = 0; index < instances && rc == SQLITE_OK; index++) {
        int phrase = 0, column = 0, offset = 0;
        rc = api->xInst(fts, index, &phrase, &column, &offset);
        if (rc == SQLITE_OK && phrase >= 0 && phrase < phrases) {
            unsigned int hits;
            memcpy(&hits, blob + 20 + 4 * phrase, 4);
            hits += 1;
            memcpy(blob + 20 + 4 * phrase, &hits, 4);
        }
    }
    if (rc != SQLITE_OK) {
        sqlite3_free(blob);
        sqlite3_result_error_code(context, rc);
        return;
    }
    sqlite3_result_blob(context, blob, size, sqlite3_free);
}

int margin_fts5_register(struct sqlite3 *db) {
    fts5_api *api = 0;
    sqlite3_stmt *statement = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", 0);
    sqlite3_step(statement);
    rc = sqlite3_finalize(statement);
    if (rc != SQLITE_OK) return rc;
    if (api == 0 || api->iVersion < 2) return SQLITE_ERROR;
    rc = api->xCreateFunction(api, "margin_phrase_rank", 0, phrase_rank, 0);
    if (rc != SQLITE_OK) return rc;
    return api->xCreateFunction(api, "margin_phrase_hits", 0, phrase_hits, 0);
}

int margin_sqlite_without_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
