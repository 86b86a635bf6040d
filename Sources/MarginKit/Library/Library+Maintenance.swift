import Foundation

/// `margin db status`.
public struct LibraryStatus: Sendable, Encodable {
    public var database: String
    public var cache: String
    public var schema: SchemaStatus
    public var counts: [String: Int]
    public var databaseBytes: Int64
}

/// `margin db check`.
public struct LibraryCheck: Sendable, Encodable {
    public var integrity: [String]
    public var foreignKeyViolations: [String]
    /// Books whose PDF is not in the cache, as "id title".
    public var missingFiles: [String]
    /// Cached files whose bytes no longer hash to their name.
    public var corruptFiles: [String]
    public var ok: Bool
}

extension Library {
    public func status() throws -> LibraryStatus {
        let counts = try repository.read { store in
            [
                "books": try store.count(Query<Book>()),
                "sources": try store.count(Query<Source>()),
                "tags": try store.count(Query<Tag>()),
                "pages": try store.count(Query<PageText>()),
                "bookmarks": try store.count(Query<Bookmark>()),
                "highlights": try store.count(Query<Highlight>()),
                "memos": try store.count(Query<Memo>()),
            ]
        }
        return LibraryStatus(
            database: paths.database, cache: paths.cache, schema: try database.schemaStatus(), counts: counts,
            databaseBytes: fileSize(paths.database) ?? 0)
    }

    /// Checks the database (integrity, foreign keys) and that every book's PDF is cached with the
    /// right bytes.
    public func check() throws -> LibraryCheck {
        let report = try database.integrityReport()
        var missing = [String]()
        var corrupt = [String]()
        for book in try allBooks() {
            let path = store.path(for: book.sha256)
            if !store.contains(book.sha256) {
                missing.append("\(book.id ?? 0) \(book.title)")
            } else if (try? sha256(ofFile: path)) != book.sha256 {
                corrupt.append("\(book.id ?? 0) \(book.title): \(path)")
            }
        }
        return LibraryCheck(
            integrity: report.integrity, foreignKeyViolations: report.foreignKeyViolations,
            missingFiles: missing, corruptFiles: corrupt,
            ok: report.ok && missing.isEmpty && corrupt.isEmpty)
    }
}
