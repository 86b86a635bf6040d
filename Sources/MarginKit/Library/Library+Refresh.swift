import Foundation
import MarginCore

/// What `refresh` found for one book.
public struct RefreshOutcome: Sendable, Encodable {
    public enum Status: String, Sendable, Encodable {
        /// The server answered 304 Not Modified.
        case notModified = "not-modified"
        /// Downloaded, and the bytes are the same.
        case unchanged
        /// New content: stored as a new version, now served, highlights re-anchored.
        case updated
        /// New content stored, the old version still served (--keep-old).
        case storedNewVersion = "stored-new-version"
        /// No source could be checked.
        case failed
        /// The book has no http(s) source to check.
        case noSource = "no-source"
    }

    public var book: Int64
    public var title: String
    public var status: Status
    public var source: String?
    public var sha256: String?
    public var highlights: AnchorCounts?
    public var error: String?
}

extension Library {
    /// Revalidates each book's sources (all books when none are given). A 304 transfers no
    /// body and changes nothing. New content becomes a new version: the old file is kept, the
    /// text indexed, and every highlight re-anchored (or marked orphaned), unless `keepOld`.
    public func refresh(
        _ books: [Book], keepOld: Bool, maxSize: Int64 = 1 << 30, timeout: Double? = nil,
        progress: (any DownloadProgress)? = nil, observer: (any RecognitionObserver)? = nil
    ) async -> [RefreshOutcome] {
        let targets = books.isEmpty ? ((try? await allBooks()) ?? []) : books
        var fetcher = Fetcher(store: blobs, maxSize: maxSize, downloader: downloader)
        fetcher.progress = progress
        fetcher.timeout = timeout
        var outcomes = [RefreshOutcome]()
        for book in targets {
            do {
                outcomes.append(try await refreshOne(book, keepOld: keepOld, fetcher: fetcher, observer: observer))
            } catch {
                outcomes.append(
                    RefreshOutcome(
                        book: book.id ?? 0, title: book.title, status: .failed, error: error.localizedDescription))
            }
        }
        return outcomes
    }

    private func refreshOne(
        _ book: Book, keepOld: Bool, fetcher: Fetcher, observer: (any RecognitionObserver)?
    ) async throws -> RefreshOutcome {
        let id = book.id ?? 0
        let sources = try await repository.read { store in
            try store.fetch(
                Query<Source>().filter(Source.Fields.bookId == id).sorted(by: Source.Fields.addedAt.ascending))
        }.filter { $0.url.lowercased().hasPrefix("http://") || $0.url.lowercased().hasPrefix("https://") }
        guard !sources.isEmpty else {
            return RefreshOutcome(book: id, title: book.title, status: .noSource)
        }
        var failures = [String]()
        for var source in sources {
            let validators =
                blobs.contains(book.sha256) ? Validators(etag: source.etag, lastModified: source.lastModified) : nil
            let result: DownloadResult
            do {
                result = try await fetcher.download(
                    url: source.url, revalidate: validators?.isEmpty == false ? validators : nil)
            } catch {
                failures.append(error.localizedDescription)
                continue
            }
            let now = Date()
            switch result {
            case .notModified(let fresh):
                source.etag = fresh.etag ?? source.etag
                source.lastModified = fresh.lastModified ?? source.lastModified
                source.checkedAt = now
                try await database.recordCheck(of: source)
                return RefreshOutcome(
                    book: id, title: book.title, status: .notModified, source: redactedURL(source.url),
                    sha256: book.sha256)
            case .staged(let staged):
                defer { try? FileManager.default.removeItem(atPath: staged.path) }
                source.etag = staged.etag
                source.lastModified = staged.lastModified
                source.checkedAt = now
                if staged.sha256 == book.sha256 {
                    _ = try blobs.place(staged.path, sha256: staged.sha256)
                    try await database.recordCheck(of: source)
                    return RefreshOutcome(
                        book: id, title: book.title, status: .unchanged, source: redactedURL(source.url),
                        sha256: book.sha256)
                }
                return try await storeNewVersion(
                    book, staged: staged, source: source, keepOld: keepOld, observer: observer)
            }
        }
        return RefreshOutcome(
            book: id, title: book.title, status: .failed, error: failures.joined(separator: "; "))
    }

    private func storeNewVersion(
        _ book: Book, staged: StagedFile, source: Source, keepOld: Bool, observer: (any RecognitionObserver)?
    ) async throws -> RefreshOutcome {
        let id = book.id ?? 0
        let facts = try checkPDF(
            head: staged.head, tail: staged.tail, count: staged.bytes, path: staged.path,
            password: try password(of: book),
            input: source.url)
        let extracted = try extractText(
            path: staged.path, password: try password(of: book), pageCount: facts.pages,
            known: try await recognizedPages(of: staged.sha256),
            similar: try await recognizedPages(ofOtherFilesOf: book, except: staged.sha256),
            pagesRead: observer.pages(of: book.title))
        // Placing the file and recording it is one step an interrupt can't split.
        let counts = try await Interruption.critical { () async throws -> AnchorCounts? in
            let placedNew = try blobs.place(staged.path, sha256: staged.sha256)
            do {
                let change =
                    keepOld
                    ? nil : try await prepareSwitch(book, to: blobs.path(for: staged.sha256), extracted: extracted)
                let version = Version(
                    bookId: id, sha256: staged.sha256, bytes: staged.bytes, pages: facts.pages, source: source.url)
                try await database.addVersion(version, checked: source, serving: change?.change)
                return change?.counts
            } catch {
                if placedNew { blobs.remove(staged.sha256) }
                throw error
            }
        }
        return RefreshOutcome(
            book: id, title: book.title, status: keepOld ? .storedNewVersion : .updated,
            source: redactedURL(source.url),
            sha256: staged.sha256, highlights: counts)
    }

    /// Serves another stored version of a book (one kept by `refresh --keep-old`, or an older
    /// one): its text is indexed, highlights re-anchored and bookmarks and memos moved with
    /// their pages, as when a refresh brings a new version.
    public func useVersion(_ book: Book, version selector: String) async throws -> RefreshOutcome {
        let wanted = selector.lowercased()
        let all = try await versions(of: book)
        let matches = all.filter {
            $0.sha256.hasPrefix(wanted) || String(all.firstIndex(of: $0).map { $0 + 1 } ?? 0) == wanted
        }
        guard matches.count == 1, let version = matches.first else {
            let list = all.enumerated().map {
                "  \($0.offset + 1)  \($0.element.sha256.prefix(12))  \(count($0.element.pages, "page"))"
            }
            throw MarginError.invalidArgument(
                (matches.isEmpty
                    ? "'\(book.title)' has no version '\(selector)'"
                    : "'\(selector)' matches \(matches.count) versions")
                    + "; give its number or a SHA-256 prefix:\n" + list.joined(separator: "\n"))
        }
        guard version.sha256 != book.sha256 else {
            throw MarginError.invalidArgument(
                "version \(version.sha256.prefix(12)) is already the one '\(book.title)' serves")
        }
        guard blobs.contains(version.sha256) else {
            throw MarginError.notCached(
                title: book.title, reason: "version \(version.sha256.prefix(12)) is no longer in the cache")
        }
        let path = blobs.path(for: version.sha256)
        let extracted = try extractText(
            path: path, password: try password(of: book), pageCount: version.pages,
            known: try await recognizedPages(of: version.sha256))
        let change = try await prepareSwitch(book, to: path, extracted: extracted)
        try await Interruption.critical {
            try await database.addVersion(version, checked: nil, serving: change.change)
        }
        return RefreshOutcome(
            book: book.id ?? 0, title: book.title, status: .updated, source: version.source.map(redactedURL),
            sha256: version.sha256,
            highlights: change.counts)
    }

    /// What serving a version changes, and how its highlights fared.
    struct VersionSwitch {
        var change: VersionChange
        var counts: AnchorCounts
    }

    func prepareSwitch(_ book: Book, to path: String, extracted: ExtractedText) async throws -> VersionSwitch {
        let document = try PDFEngines.current.open(path: path, password: try password(of: book))
        let recognized = Dictionary(extracted.ocr.map { ($0.page, $0) }, uniquingKeysWith: { first, _ in first })
        // Everyone's the user may place (a team's: read for that only, never shown).
        let id = book.id ?? -1
        let placed = try await repository.read { store in try store.highlightsToPlace(bookId: id) }
        let anchored = reanchor(placed, pages: extracted.pages, document: document, recognized: recognized)
        let mapping = pageMapping(old: try await pageTexts(of: book), new: extracted.pages)
        return VersionSwitch(
            change: VersionChange(text: extracted, highlights: anchored.updated, pageMap: mapping),
            counts: anchored.counts)
    }

    /// A book's versions, oldest first.
    public func versions(of book: Book) async throws -> [Version] {
        let id = book.id ?? -1
        return try await repository.read { store in
            try store.fetch(
                Query<Version>().filter(Version.Fields.bookId == id).sorted(by: Version.Fields.addedAt.ascending))
        }
    }
}
