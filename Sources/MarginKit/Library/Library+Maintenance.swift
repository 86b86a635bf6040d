import Foundation
import MarginCore

/// `margin db status`.
public struct LibraryStatus: Sendable, Encodable {
    public var database: String
    public var cache: String
    public var schema: SchemaStatus
    public var counts: [String: Int]
    public var databaseBytes: Int64
    /// A team library's user (its PostgreSQL role); nil for a personal library.
    public var user: String?
    /// Whether the connection to a team library is encrypted (TLS), as the server says.
    public var tls: Bool?
}

/// `margin db check`.
public struct LibraryCheck: Sendable, Encodable {
    public var integrity: [String]
    public var foreignKeyViolations: [String]
    /// Books whose PDF is not in the cache, as "id title".
    public var missingFiles: [String]
    /// Cached files whose bytes no longer hash to their name.
    public var corruptFiles: [String]
    /// Books whose page text is not indexed (an old library, or work a crash cut short).
    public var unindexedBooks: [String]
    /// Temporary files left by a margin process that is no longer running.
    public var staleTemporaryFiles: [String]
    /// Cached files no book or version uses (what `cache prune` would remove).
    public var unusedFiles: [String]
    /// What OCR read on PDFs that are gone (no book or version holds them, none is cached), as
    /// "SHA-256 (N pages)": kept for a PDF added again; `--repair` removes it.
    public var unusedRecognition: [String]
    /// The database and its WAL disagree with the write count recorded after the last write:
    /// the -wal file was lost or an older copy of the database was put in place.
    public var writeLog: String
    /// What `--repair` did.
    public var repaired: [String]
    public var ok: Bool
}

extension Library {
    public func status() async throws -> LibraryStatus {
        let counts = try await repository.read { store in
            [
                "books": try store.count(Query<Book>()),
                "sources": try store.count(Query<Source>()),
                "tags": try store.count(Query<Tag>()),
                "pages": try store.count(Query<PageText>()),
                "bookmarks": try store.count(Query<Bookmark>()),
                "highlights": try store.count(Query<Highlight>()),
                "memos": try store.count(Query<Memo>()),
                "guides": try store.count(Query<BookGuide>()),
                "recognizedPages": try store.count(Query<OCRPage>()),
            ]
        }
        return LibraryStatus(
            database: database.path ?? paths.database, cache: paths.cache, schema: try database.schemaStatus(),
            counts: counts,
            databaseBytes: paths.location.isServer ? 0 : fileSize(paths.database) ?? 0,
            user: (database as? any TeamStore)?.user, tls: (database as? any TeamStore)?.encrypted)
    }

    /// Checks the database (integrity, foreign keys), that every book's PDF is cached with the
    /// right bytes and its text indexed, and looks for what a crash can leave (temporary files of
    /// dead processes). With `repair`, fixes what it can: removes those files, indexes unindexed
    /// books, fetches missing files again from their sources.
    public func check(repair: Bool = false) async throws -> LibraryCheck {
        let report = try database.integrityReport()
        var missing = [Book]()
        var corrupt = [String]()
        let books = try await allBooks()
        for book in books {
            let path = blobs.path(for: book.sha256)
            if !blobs.contains(book.sha256) {
                missing.append(book)
            } else if (try? sha256(ofFile: path)) != book.sha256 {
                corrupt.append("\(book.id ?? 0) \(book.title): \(path)")
            }
        }
        let unindexed = try await unindexedBooks()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: blobs.temporaryFolder)) ?? []
        let stale = names.filter { name in temporaryFileOwner(name).map { !processIsAlive($0) } ?? false }
            .map { blobs.temporaryFolder + "/" + $0 }
        let unused = try await cacheList().filter { !$0.partial && $0.books.isEmpty }.map(\.file)
        let recognition = try await repository.read { store in
            let held = Set(try store.all(Book.self).map(\.sha256) + store.all(Version.self).map(\.sha256))
            return try store.all(OCRPage.self).map(\.sha256).filter { !held.contains($0) }
        }
        let gone = Dictionary(grouping: recognition.filter { !blobs.contains($0) }, by: { $0 }).mapValues(\.count)
        var unusedRecognition = gone.keys.sorted().map { "\($0) (\(count(gone[$0] ?? 0, "page")))" }
        let counts = try database.writeCounts()
        var writeLog = "ok"
        if let recorded = counts.recorded, counts.database < recorded {
            writeLog =
                "the database holds \(counts.database) writes but \(recorded) were made: the -wal file was lost or "
                + "an older copy of library.sqlite was put in place; changes made since are missing"
        }
        var repaired = [String]()
        var stillMissing = missing.map { "\($0.id ?? 0) \($0.title)" }
        var stillUnindexed = unindexed.map { "\($0.id ?? 0) \($0.title)" }
        var stillStale = stale
        if repair {
            for path in stale where (try? FileManager.default.removeItem(atPath: path)) != nil {
                repaired.append("removed \(path)")
                stillStale.removeAll { $0 == path }
            }
            for book in missing {
                if (try? await ensureCached(book)) != nil {
                    repaired.append("fetched \(book.id ?? 0) \(book.title)")
                    stillMissing.removeAll { $0 == "\(book.id ?? 0) \(book.title)" }
                }
            }
            if !gone.isEmpty {
                let removed = try await repository.write { store in
                    try gone.keys.reduce(0) { total, sha256 in
                        total + (try store.delete(Query<OCRPage>().filter(OCRPage.Fields.sha256 == sha256)))
                    }
                }
                repaired.append(
                    "removed what OCR read on \(count(gone.count, "PDF")) that are gone (\(count(removed, "page")))")
                unusedRecognition = []
            }
            for book in unindexed where (try? await reindex([book])) != nil {
                repaired.append("indexed \(book.id ?? 0) \(book.title)")
                stillUnindexed.removeAll { $0 == "\(book.id ?? 0) \(book.title)" }
            }
        }
        return LibraryCheck(
            integrity: report.integrity, foreignKeyViolations: report.foreignKeyViolations, missingFiles: stillMissing,
            corruptFiles: corrupt, unindexedBooks: stillUnindexed, staleTemporaryFiles: stillStale, unusedFiles: unused,
            unusedRecognition: unusedRecognition, writeLog: writeLog, repaired: repaired,
            ok: report.ok && stillMissing.isEmpty && corrupt.isEmpty && stillUnindexed.isEmpty && stillStale.isEmpty
                && writeLog == "ok")
    }
}
