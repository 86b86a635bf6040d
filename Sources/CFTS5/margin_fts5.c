#include "margin_fts5.h"

#include <sqlite3.h>

/// The row's score as FTS5's bm25 gives it (k1 = 1.2, b = 0.75, every column weighted 1),
/// divided by the phrase's IDF: -(f·(k1+1)) / (f + k1·(1 − b + b·D/avgdl)), f the phrase's
/// hits in the row, D the row's length in tokens, avgdl the average length.
static void phrase_rank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context, int count,
                        sqlite3_value **values) {
    (void)count;
    (void)values;
    sqlite3_int64 rows = 0, total = 0;
    int tokens = 0, hits = 0;
    int rc = api->xRowCount(fts, &rows);
    if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &total);
    if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &tokens);
    if (rc == SQLITE_OK) rc = api->xInstCount(fts, &hits);
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
    return api->xCreateFunction(api, "margin_phrase_rank", 0, phrase_rank, 0);
}
