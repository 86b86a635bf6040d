import GRDB

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
        ("v1-books", v1Books)
    ]

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
}
