import Foundation
import MarginCore

/// One file in the cache, for `cache list`.
public struct CacheEntry: Sendable, Encodable {
    public var file: String
    public var sha256: String?
    public var bytes: Int64
    /// The books that use it, as "id title"; empty for an orphan or a partial download.
    public var books: [String]
    /// The version a book serves (false for an older version).
    public var current: Bool
    /// A partial download (`.part`) or a leftover temporary file.
    public var partial: Bool
    public var lastUsed: String?
}

/// What `cache verify`, `prune` or `clear` did.
public struct CacheReport: Sendable, Encodable {
    public var checked = 0
    public var corrupt: [String] = []
    public var restored: [String] = []
    public var removed: [String] = []
    public var kept: [String] = []
    public var freedBytes: Int64 = 0
    /// A team library's stored PDFs no book uses, removed from the database (SHA-256s).
    public var removedFromDatabase: [String] = []
}

extension Library {
    /// Every file in the cache with what uses it. Symlinks are listed as such and never followed.
    public func cacheList() async throws -> [CacheEntry] {
        let (books, versions) = try await repository.read { store in
            (try store.all(Book.self), try store.all(Version.self))
        }
        let bookById = Dictionary(books.compactMap { b in b.id.map { ($0, b) } }, uniquingKeysWith: { a, _ in a })
        var entries = [CacheEntry]()
        for path in cacheFiles(in: blobs.root + "/pdfs") {
            let sha = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            var users = Set<String>()
            var current = false
            for book in books where book.sha256 == sha {
                users.insert("\(book.id ?? 0) \(book.title)")
                current = true
            }
            for version in versions where version.sha256 == sha {
                if let book = bookById[version.bookId] { users.insert("\(book.id ?? 0) \(book.title)") }
            }
            let lastUsed = books.filter { $0.sha256 == sha }.compactMap(\.openedAt).max()
            entries.append(
                CacheEntry(
                    file: path, sha256: sha, bytes: fileSize(path) ?? 0, books: users.sorted(), current: current,
                    partial: false, lastUsed: lastUsed.map(isoDate)))
        }
        for path in cacheFiles(in: blobs.temporaryFolder) where !path.hasSuffix(".json") {
            entries.append(
                CacheEntry(
                    file: path, sha256: nil, bytes: fileSize(path) ?? 0, books: [], current: false, partial: true,
                    lastUsed: nil))
        }
        return entries
    }

    /// Rehashes every cached file. A damaged one is moved aside to `damaged/` and fetched again
    /// from its book's sources; the damaged copy is deleted only once a good one is back.
    public func cacheVerify() async throws -> CacheReport {
        var report = CacheReport()
        let books = try await allBooks()
        for entry in try await cacheList() where !entry.partial {
            report.checked += 1
            guard let sha = entry.sha256, (try? sha256(ofFile: entry.file)) != sha else { continue }
            report.corrupt.append(entry.file)
            let aside = "\(blobs.root)/damaged/\(sha)-\(Int(Date().timeIntervalSince1970)).pdf"
            try makeFolder(blobs.root + "/damaged")
            guard rename(entry.file, aside) == 0 else { continue }
            if let book = books.first(where: { $0.sha256 == sha }), (try? await ensureCached(book)) != nil {
                report.restored.append("\(book.id ?? 0) \(book.title)")
                try? FileManager.default.removeItem(atPath: aside)
            } else {
                report.kept.append(aside)
            }
        }
        return report
    }

    /// Removes cached files that no book or version refers to, and partial downloads untouched
    /// for `staleAfter` seconds; in a team library also the stored PDFs no book uses (a client
    /// killed between storing a PDF and its book leaves one) stored more than `staleAfter` ago.
    public func cachePrune(staleAfter: TimeInterval = 3600) async throws -> CacheReport {
        var report = CacheReport()
        if let team = database.fileKeeper {
            for file in try team.pruneFiles(olderThan: staleAfter) {
                report.removedFromDatabase.append(file.sha256)
                report.freedBytes += file.bytes
            }
        }
        for entry in try await cacheList() {
            let old = (modificationDate(entry.file).map { Date().timeIntervalSince($0) > staleAfter }) ?? true
            guard entry.books.isEmpty, !entry.partial || old else { continue }
            try? FileManager.default.removeItem(atPath: entry.file)
            if entry.partial { try? FileManager.default.removeItem(atPath: entry.file + ".json") }
            report.removed.append(entry.file)
            report.freedBytes += entry.bytes
        }
        return report
    }

    /// Drops cached PDFs that can be fetched again: a book's current and newest version whose
    /// source serves it (an http(s) URL, or a local file that still has these bytes). Old
    /// versions, the current file of a book whose newer version is stored (`--keep-old`), and
    /// copies of changed local files are kept unless `all`.
    /// Drops the cached PDFs that can be fetched again: a book's current, newest version with
    /// an http(s) source. A book added from a file is stored, not cached (the file may be gone
    /// tomorrow: a Downloads folder): it stays unless `all`, and then only with `confirmed`.
    public func cacheClear(all: Bool, confirmed: Bool = true) async throws -> CacheReport {
        var report = CacheReport()
        let (books, sources, versions) = try await repository.read { store in
            (try store.all(Book.self), try store.all(Source.self), try store.all(Version.self))
        }
        var localHashes = [String: String?]()
        func localSHA(_ path: String) -> String? {
            if let known = localHashes[path] { return known }
            let sha = isRegularFile(path) ? try? sha256(ofFile: path) : nil
            localHashes[path] = sha
            return sha
        }
        func refetchable(_ sha: String) -> Bool {
            let owners = books.filter { book in
                book.sha256 == sha || versions.contains { $0.bookId == book.id && $0.sha256 == sha }
            }
            guard !owners.isEmpty else { return false }
            return owners.allSatisfy { book in
                guard book.sha256 == sha else { return false }
                let newest = versions.filter { $0.bookId == book.id }.max {
                    ($0.addedAt, $0.id ?? 0) < ($1.addedAt, $1.id ?? 0)
                }
                if let newest, newest.sha256 != sha { return false }
                return sources.contains { source in
                    guard source.bookId == book.id else { return false }
                    let url = source.url.lowercased()
                    return url.hasPrefix("http://") || url.hasPrefix("https://")
                }
            }
        }
        let entries = try await cacheList().filter { !$0.partial }
        if all && !confirmed {
            let stored = entries.filter { !refetchable($0.sha256 ?? "") }
            if !stored.isEmpty {
                throw MarginError.invalidArgument(
                    "\(stored.count) of the cached PDFs can't be fetched again (books added from files, old versions); "
                        + "add --yes to drop them too, or leave out --all")
            }
        }
        for entry in entries {
            if !all && !refetchable(entry.sha256 ?? "") {
                report.kept.append(entry.file)
                continue
            }
            try? FileManager.default.removeItem(atPath: entry.file)
            report.removed.append(entry.file)
            report.freedBytes += entry.bytes
        }
        return report
    }

    /// Regular files below `folder`, sorted; symlinks and their targets are never entered.
    private func cacheFiles(in folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files = [String]()
        while let name = enumerator.nextObject() as? String {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFLNK {
                enumerator.skipDescendants()
                continue
            }
            if (info.st_mode & S_IFMT) == S_IFREG { files.append(path) }
        }
        return files.sorted()
    }
}

func modificationDate(_ path: String) -> Date? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
}
