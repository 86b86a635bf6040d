import GRDB
import MarginCore

/// The library's schema, as an ordered list of migrations.
///
/// Append-only: a migration that has shipped is never edited, renamed or reordered; change the
/// schema by adding a new one at the end. Migrations use SQL and never the app's model types, so
/// they keep meaning what they meant when they shipped. `fixtures/db/` holds a database made at
/// each shipped version.
enum Schema {
    /// Migration identifiers in order; the schema version is the number applied.
    static var identifiers: [String] { migrations.map(\.id) }

    static let migrations: [(id: String, migrate: @Sendable (Database) throws -> Void)] = [
        ("v1-books", v1Books),
        ("v2-page-text", v2PageText),
        ("v3-annotations", v3Annotations),
        ("v4-versions", v4Versions),
        ("v5-folded-annotations", v5FoldedAnnotations),
        ("v6-page-words", v6PageWords),
        ("v7-users", v7Users),
        ("v8-metadata", v8Metadata),
        ("v9-work-type", v9WorkType),
        ("v10-ocr", v10OCR),
        ("v11-typography", v11Typography),
        ("v12-language", v12Language),
        ("v13-cjk", v13CJK),
        ("v14-kana", v14Kana),
    ]

    /// A library upgraded past this migration is vacuumed afterwards: it frees half the file.
    static let vacuumAfter = "v6-page-words"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.id, migrate: migration.migrate)
        }
        return migrator
    }

    /// v1: books, their sources (URLs) and tags.
    private static func v1Books(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE book (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    sha256 TEXT NOT NULL UNIQUE,
                    title TEXT NOT NULL,
                    author TEXT,
                    pages INTEGER NOT NULL,
                    bytes INTEGER NOT NULL,
                    folder TEXT,
                    memo TEXT,
                    password TEXT,
                    addedAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL,
                    openedAt DATETIME
                );
                CREATE INDEX book_folder ON book(folder);
                CREATE INDEX book_openedAt ON book(openedAt);

                CREATE TABLE source (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    url TEXT NOT NULL,
                    etag TEXT,
                    lastModified TEXT,
                    addedAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL,
                    UNIQUE(bookId, url)
                );
                CREATE INDEX source_url ON source(url);

                CREATE TABLE tag (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    name TEXT NOT NULL COLLATE NOCASE,
                    createdAt DATETIME NOT NULL,
                    UNIQUE(bookId, name)
                );
                CREATE INDEX tag_name ON tag(name);
                """)
    }

    /// v2: the text of every page and a trigram full-text index over its folded form.
    /// Books that existed before have `indexedAt` NULL and are indexed on first use.
    private static func v2PageText(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE book ADD COLUMN textlessPages INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE book ADD COLUMN indexedAt DATETIME;

                CREATE TABLE page (
                    id INTEGER PRIMARY KEY,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    number INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    norm TEXT NOT NULL,
                    UNIQUE(bookId, number)
                );

                CREATE VIRTUAL TABLE page_fts USING fts5(
                    norm, bookId UNINDEXED, content='page', content_rowid='id', tokenize='trigram'
                );
                CREATE TRIGGER page_fts_insert AFTER INSERT ON page BEGIN
                    INSERT INTO page_fts(rowid, norm, bookId) VALUES (new.id, new.norm, new.bookId);
                END;
                CREATE TRIGGER page_fts_delete AFTER DELETE ON page BEGIN
                    INSERT INTO page_fts(page_fts, rowid, norm, bookId) VALUES ('delete', old.id, old.norm, old.bookId);
                END;
                CREATE TRIGGER page_fts_update AFTER UPDATE ON page BEGIN
                    INSERT INTO page_fts(page_fts, rowid, norm, bookId) VALUES ('delete', old.id, old.norm, old.bookId);
                    INSERT INTO page_fts(rowid, norm, bookId) VALUES (new.id, new.norm, new.bookId);
                END;
                """)
    }

    /// v3: bookmarks, highlights and memos, each on a book, with a trigram index over the
    /// folded text of highlights (text and note) and memos for `search --annotations`.
    private static func v3Annotations(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE bookmark (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    page INTEGER NOT NULL,
                    label TEXT,
                    createdAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL
                );
                CREATE INDEX bookmark_book ON bookmark(bookId, page);

                CREATE TABLE highlight (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    page INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    prefix TEXT NOT NULL DEFAULT '',
                    suffix TEXT NOT NULL DEFAULT '',
                    rects TEXT NOT NULL,
                    color TEXT NOT NULL,
                    note TEXT,
                    author TEXT,
                    orphaned BOOLEAN NOT NULL DEFAULT 0,
                    createdAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL
                );
                CREATE INDEX highlight_book ON highlight(bookId, page);

                CREATE TABLE memo (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid TEXT NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    page INTEGER,
                    text TEXT NOT NULL,
                    author TEXT,
                    createdAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL
                );
                CREATE INDEX memo_book ON memo(bookId, page);

                CREATE VIRTUAL TABLE annotation_fts USING fts5(
                    norm, kind UNINDEXED, ref UNINDEXED, bookId UNINDEXED, tokenize='trigram'
                );
                CREATE TRIGGER highlight_fts_insert AFTER INSERT ON highlight BEGIN
                    INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId)
                    VALUES (new.id * 2, margin_fold(new.text || ' ' || coalesce(new.note, '')), 'highlight', new.id, new.bookId);
                END;
                CREATE TRIGGER highlight_fts_update AFTER UPDATE ON highlight BEGIN
                    DELETE FROM annotation_fts WHERE rowid = old.id * 2;
                    INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId)
                    VALUES (new.id * 2, margin_fold(new.text || ' ' || coalesce(new.note, '')), 'highlight', new.id, new.bookId);
                END;
                CREATE TRIGGER highlight_fts_delete AFTER DELETE ON highlight BEGIN
                    DELETE FROM annotation_fts WHERE rowid = old.id * 2;
                END;
                CREATE TRIGGER memo_fts_insert AFTER INSERT ON memo BEGIN
                    INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId) VALUES (new.id * 2 + 1, margin_fold(new.text), 'memo', new.id, new.bookId);
                END;
                CREATE TRIGGER memo_fts_update AFTER UPDATE ON memo BEGIN
                    DELETE FROM annotation_fts WHERE rowid = old.id * 2 + 1;
                    INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId) VALUES (new.id * 2 + 1, margin_fold(new.text), 'memo', new.id, new.bookId);
                END;
                CREATE TRIGGER memo_fts_delete AFTER DELETE ON memo BEGIN
                    DELETE FROM annotation_fts WHERE rowid = old.id * 2 + 1;
                END;
                """)
    }

    /// v4: the versions of each book's PDF (a URL's content can change), and when each source
    /// was last checked. Every existing book gets its current file as its first version.
    private static func v4Versions(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE version (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid BLOB NOT NULL UNIQUE,
                    bookId INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                    sha256 TEXT NOT NULL,
                    bytes INTEGER NOT NULL,
                    pages INTEGER NOT NULL,
                    source TEXT,
                    addedAt DATETIME NOT NULL,
                    UNIQUE(bookId, sha256)
                );
                CREATE INDEX version_sha256 ON version(sha256);
                INSERT INTO version (uuid, bookId, sha256, bytes, pages, source, addedAt)
                    SELECT randomblob(16), id, sha256, bytes, pages,
                           (SELECT url FROM source WHERE source.bookId = book.id ORDER BY source.id LIMIT 1), addedAt
                    FROM book;
                ALTER TABLE source ADD COLUMN checkedAt DATETIME;
                """)
    }

    /// v5: highlights and memos keep their folded text in a `norm` column, computed in Swift
    /// when they are saved, and the annotation index is filled from it. Before, triggers called
    /// `margin_fold`, a function only Margin's own connections had: any other SQLite client (the
    /// `sqlite3` shell) failed to write a memo. A row written without `norm` (by such a client)
    /// is indexed by its lowercased text until Margin next saves it.
    private static func v5FoldedAnnotations(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER highlight_fts_insert;
                DROP TRIGGER highlight_fts_update;
                DROP TRIGGER highlight_fts_delete;
                DROP TRIGGER memo_fts_insert;
                DROP TRIGGER memo_fts_update;
                DROP TRIGGER memo_fts_delete;
                ALTER TABLE highlight ADD COLUMN norm TEXT NOT NULL DEFAULT '';
                ALTER TABLE memo ADD COLUMN norm TEXT NOT NULL DEFAULT '';
                """)
        // Folded as Margin folds all text (MarginCore's `folded`), the text as a highlight's or
        // memo's `searchText` joins it.
        let highlights = try Row.fetchAll(db, sql: "SELECT id, text, note FROM highlight")
        for row in highlights {
            let text: String = row["text"]
            let note: String? = row["note"]
            try db.execute(
                sql: "UPDATE highlight SET norm = ? WHERE id = ?",
                arguments: [folded(text + " " + (note ?? "")), row["id"]])
        }
        let memos = try Row.fetchAll(db, sql: "SELECT id, text FROM memo")
        for row in memos {
            let text: String = row["text"]
            try db.execute(sql: "UPDATE memo SET norm = ? WHERE id = ?", arguments: [folded(text), row["id"]])
        }
        try db.execute(
            sql: """
                DELETE FROM annotation_fts;
                INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId)
                    SELECT id * 2, norm, 'highlight', id, bookId FROM highlight;
                INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId)
                    SELECT id * 2 + 1, norm, 'memo', id, bookId FROM memo;

                """
                    + annotationTriggers(
                        table: "highlight", rowid: "id * 2", fallback: "new.text || ' ' || coalesce(new.note, '')")
                    + annotationTriggers(table: "memo", rowid: "id * 2 + 1", fallback: "new.text"))
    }

    /// v6: the page index holds words, not trigrams, and page text is stored once. `page_fts`
    /// (a trigram index, as large as the text) and `page.norm` (the folded text) go; the words
    /// of every page's folded text go into a contentless FTS5 table, and each distinct word into
    /// a vocabulary with a trigram index of its own (see `PageWords`). Triggers queue page
    /// changes, which margin applies to the index at the end of each write.
    private static func v6PageWords(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER page_fts_insert;
                DROP TRIGGER page_fts_delete;
                DROP TRIGGER page_fts_update;
                DROP TABLE page_fts;
                ALTER TABLE page DROP COLUMN norm;

                CREATE VIRTUAL TABLE page_words USING fts5(words, content='', tokenize='ascii');
                CREATE TABLE term (id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE);
                CREATE VIRTUAL TABLE term_fts USING fts5(
                    word, content='term', content_rowid='id', tokenize='trigram'
                );
                CREATE TRIGGER term_insert AFTER INSERT ON term BEGIN
                    INSERT INTO term_fts(rowid, word) VALUES (new.id, new.word);
                END;
                CREATE TABLE page_pending (seq INTEGER PRIMARY KEY, page INTEGER NOT NULL, old TEXT);
                CREATE TRIGGER page_words_insert AFTER INSERT ON page BEGIN
                    INSERT INTO page_pending(page, old) VALUES (new.id, NULL);
                END;
                CREATE TRIGGER page_words_delete AFTER DELETE ON page BEGIN
                    INSERT INTO page_pending(page, old) VALUES (old.id, old.text);
                END;
                CREATE TRIGGER page_words_update AFTER UPDATE OF text ON page BEGIN
                    INSERT INTO page_pending(page, old) VALUES (old.id, old.text);
                END;
                """)
        var vocabulary = Set<String>()
        let pages = try Row.fetchCursor(db, sql: "SELECT id, text FROM page ORDER BY id")
        while let row = try pages.next() {
            try PageWords.insert(page: row[0], text: row[1], db, vocabulary: &vocabulary)
        }
    }

    /// v5's triggers that keep `annotation_fts` in step with one annotation table: the stored
    /// folded text (`norm`), or the lowercased text of a row written without it.
    private static func annotationTriggers(table: String, rowid: String, fallback: String) -> String {
        let indexNew = """
            INSERT INTO annotation_fts(rowid, norm, kind, ref, bookId) VALUES (
                new.\(rowid), CASE WHEN new.norm <> '' THEN new.norm ELSE lower(\(fallback)) END, '\(table)', new.id,
                new.bookId);
            """
        let dropOld = "DELETE FROM annotation_fts WHERE rowid = old.\(rowid);"
        return """
            CREATE TRIGGER \(table)_fts_insert AFTER INSERT ON \(table) BEGIN \(indexNew) END;
            CREATE TRIGGER \(table)_fts_update AFTER UPDATE ON \(table) BEGIN \(dropOld) \(indexNew) END;
            CREATE TRIGGER \(table)_fts_delete AFTER DELETE ON \(table) BEGIN \(dropOld) END;

            """
    }

    /// v7: who made an annotation and whether it is shared, and who added a book: what a team
    /// library records, kept here too so a library copied between backends loses nothing. In a
    /// personal library they stay empty (the owner is the library's one user).
    private static func v7Users(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE book ADD COLUMN addedBy TEXT;
                ALTER TABLE bookmark ADD COLUMN owner TEXT;
                ALTER TABLE bookmark ADD COLUMN shared BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE highlight ADD COLUMN owner TEXT;
                ALTER TABLE highlight ADD COLUMN shared BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE memo ADD COLUMN owner TEXT;
                ALTER TABLE memo ADD COLUMN shared BOOLEAN NOT NULL DEFAULT 0;
                """)
    }

    /// v8: what each book is (DOI, arXiv id, year, venue, publisher, its citation key, unique,
    /// and which fields a user set by hand) and how to find one's way in it (`guide`: its outline
    /// and page labels, one row a book).
    private static func v8Metadata(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE book ADD COLUMN doi TEXT;
                ALTER TABLE book ADD COLUMN arxiv TEXT;
                ALTER TABLE book ADD COLUMN year INTEGER;
                ALTER TABLE book ADD COLUMN citationKey TEXT;
                ALTER TABLE book ADD COLUMN venue TEXT;
                ALTER TABLE book ADD COLUMN publisher TEXT;
                ALTER TABLE book ADD COLUMN userFields TEXT NOT NULL DEFAULT '[]';
                CREATE UNIQUE INDEX book_citationKey ON book(citationKey);
                CREATE TABLE guide (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    bookId INTEGER NOT NULL UNIQUE REFERENCES book(id) ON DELETE CASCADE,
                    labels TEXT,
                    outline TEXT NOT NULL DEFAULT '[]'
                );
                """)
    }

    /// v9: what kind of work a book is (Crossref's type) and where its year came from.
    private static func v9WorkType(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE book ADD COLUMN workType TEXT;
                ALTER TABLE book ADD COLUMN yearSource TEXT;
                UPDATE book SET yearSource = 'you' WHERE userFields LIKE '%"year"%';
                """)
    }

    /// v10: what recognition read on scanned pages, by the PDF's SHA-256 and page (a PDF's, not
    /// a book's: a re-add or another book with the same file finds it), and how many of a book's
    /// pages it gave text to.
    private static func v10OCR(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE ocr_page (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uuid BLOB NOT NULL UNIQUE,
                    sha256 TEXT NOT NULL,
                    page INTEGER NOT NULL,
                    words TEXT NOT NULL,
                    confidence REAL NOT NULL,
                    engine TEXT NOT NULL,
                    languages TEXT NOT NULL,
                    dpi REAL NOT NULL,
                    image TEXT,
                    createdAt DATETIME NOT NULL,
                    UNIQUE(sha256, page)
                );
                CREATE INDEX ocr_page_image ON ocr_page(image);
                ALTER TABLE book ADD COLUMN ocrPages INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE book ADD COLUMN ocrConfidence REAL;
                """)
    }

    /// v11: typography folded (`typographicFold`: curly quotes, dashes, soft hyphens). The folded
    /// text of highlights and memos is folded again (their index follows by its triggers); when a
    /// page holds a soft hyphen, which now joins the word it sits in, the page index is rebuilt
    /// (its words for the other marks are the same: they separated words before and still do).
    private static func v11Typography(_ db: Database) throws {
        try refoldAnnotations(db)
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM page WHERE instr(text, char(173)) > 0)") == true
        else { return }
        try reindexPages(db)
    }

    /// The folded text of every highlight and memo as `folded` makes it now, where it differs.
    private static func refoldAnnotations(_ db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT id, text, note, norm FROM highlight") {
            let text: String = row["text"]
            let note: String? = row["note"]
            let norm = folded(text + " " + (note ?? ""))
            if norm != row["norm"] {
                try db.execute(sql: "UPDATE highlight SET norm = ? WHERE id = ?", arguments: [norm, row["id"]])
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, text, norm FROM memo") {
            let norm = folded(row["text"] as String)
            if norm != row["norm"] {
                try db.execute(sql: "UPDATE memo SET norm = ? WHERE id = ?", arguments: [norm, row["id"]])
            }
        }
    }

    /// Every page's words indexed again, as `indexedWords` gives them now.
    private static func reindexPages(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO page_words(page_words) VALUES ('delete-all')")
        var vocabulary = Set(try String.fetchAll(db, sql: "SELECT word FROM term"))
        let pages = try Row.fetchCursor(db, sql: "SELECT id, text FROM page ORDER BY id")
        while let row = try pages.next() {
            try PageWords.insert(page: row[0], text: row[1], db, vocabulary: &vocabulary)
        }
        // The index now holds every page's text as it is: changes queued before are in it.
        try db.execute(sql: "DELETE FROM page_pending")
    }

    /// v13: Chinese and Japanese text indexed as pairs of letters (`isBigramScalar`), and kana
    /// folded with their voicing marks (が is not か). Annotations are folded again; when a page
    /// holds such letters, every page's words are indexed again, and the vocabulary's words made
    /// of such letters (whole runs, as v6 to v12 held them) go first.
    private static func v13CJK(_ db: Database) throws {
        try refoldAnnotations(db)
        var holding = false
        let texts = try String.fetchCursor(db, sql: "SELECT text FROM page")
        while !holding, let text = try texts.next() {
            holding = text.unicodeScalars.contains(where: isBigramScalar)
        }
        guard holding else { return }
        try forgetWords(db) { $0.unicodeScalars.contains(where: isBigramScalar) }
        try reindexPages(db)
    }

    /// The vocabulary's words `leaving` says go, gone (before the pages are indexed again).
    private static func forgetWords(_ db: Database, leaving: (String) -> Bool) throws {
        let words = try Row.fetchAll(db, sql: "SELECT id, word FROM term")
        for row in words where leaving(row["word"] as String) {
            // `term_fts` holds its words' trigrams by `term`'s insert trigger only.
            try db.execute(
                sql: "INSERT INTO term_fts(term_fts, rowid, word) VALUES ('delete', ?, ?)",
                arguments: [row["id"] as Int64, row["word"] as String])
            try db.execute(sql: "DELETE FROM term WHERE id = ?", arguments: [row["id"] as Int64])
        }
    }

    /// v14: a voicing mark written apart from its kana (half-width ｶﾞ, or カ and U+3099) folded
    /// into the voiced letter (`KanaVoicing`), as ガ folds: annotations are folded again, and
    /// when a page holds such a mark, the words holding one leave the vocabulary and every
    /// page's words are indexed again.
    private static func v14Kana(_ db: Database) throws {
        try refoldAnnotations(db)
        let marks = KanaVoicing.marks.map { "instr(text, char(\($0.value))) > 0" }.joined(separator: " OR ")
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM page WHERE \(marks))") == true else { return }
        try forgetWords(db, leaving: KanaVoicing.holdsMarks)
        try reindexPages(db)
    }

    /// v12: the language each book is written in, told from the text of its pages
    /// (`Languages.detect`, which reads the first of their words): its words are stemmed in it.
    private static func v12Language(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE book ADD COLUMN lang TEXT")
        for book in try Int64.fetchAll(db, sql: "SELECT id FROM book WHERE indexedAt IS NOT NULL") {
            let texts = try String.fetchAll(
                db, sql: "SELECT text FROM page WHERE bookId = ? ORDER BY number LIMIT 200", arguments: [book])
            if let lang = Languages.detect(texts) {
                try db.execute(sql: "UPDATE book SET lang = ? WHERE id = ?", arguments: [lang, book])
            }
        }
    }
}
