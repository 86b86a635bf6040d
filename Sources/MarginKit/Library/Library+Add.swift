import Foundation
import MarginCore

/// How `add` saves new books.
public struct AddOptions: Sendable {
    public var title: String?
    public var author: String?
    public var folder: String?
    public var tags: [String] = []
    public var password: String?
    /// Largest PDF accepted, in bytes.
    public var maxSize: Int64 = 1 << 30
    /// The longest one download may take, in seconds; nil for no limit.
    public var timeout: Double?
    /// Look the work up online (Crossref by DOI, arXiv by id) before saving it.
    public var lookup = false

    public init(
        title: String? = nil, author: String? = nil, folder: String? = nil, tags: [String] = [],
        password: String? = nil,
        maxSize: Int64 = 1 << 30, timeout: Double? = nil
    ) {
        self.title = title
        self.author = author
        self.folder = folder
        self.tags = tags
        self.password = password
        self.maxSize = maxSize
        self.timeout = timeout
    }
}

/// The result of adding one input: the contract's `add --json` element.
public struct AddOutcome: Sendable, Encodable {
    public var input: String
    public var book: BookInfo?
    public var duplicate: Bool
    /// What went wrong, in the library's words; a front end may reword it (`failure` is the error).
    public var error: String?
    public var failure: (any Error)?
    public var ok: Bool { book != nil }

    enum CodingKeys: String, CodingKey { case input, ok, book, duplicate, error }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(redactedURL(input), forKey: .input)
        try container.encode(ok, forKey: .ok)
        if let book {
            try container.encode(book, forKey: .book)
            try container.encode(duplicate, forKey: .duplicate)
        } else {
            try container.encode(error ?? "unknown error", forKey: .error)
        }
    }
}

/// Where an input to `add` comes from.
enum InputKind: Equatable {
    case remote(url: String)
    case local(path: String)

    init(_ input: String) throws {
        let lower = input.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard let url = URL(string: input), let host = url.host, !host.isEmpty else {
                throw MarginError.invalidURL(input)
            }
            self = .remote(url: input)
        } else if lower.hasPrefix("file://") {
            guard let url = URL(string: input), url.isFileURL, !url.path.isEmpty else {
                throw MarginError.invalidURL(input)
            }
            self = .local(path: url.path)
        } else if input.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) != nil,
            input.contains("://") || !FileManager.default.fileExists(atPath: input)
        {
            throw MarginError.unsupportedScheme(input)
        } else {
            let absolute = URL(fileURLWithPath: input).standardizedFileURL.path
            self = .local(path: absolute)
        }
    }

    /// The URL recorded as the book's source.
    var sourceURL: String {
        switch self {
        case .remote(let url): return url
        case .local(let path): return URL(fileURLWithPath: path).absoluteString
        }
    }

    /// The title to use when the PDF has none: the file name without `.pdf`.
    var fallbackTitle: String {
        let name: String
        switch self {
        case .remote(let url):
            let parsed = URL(string: url)
            let last = parsed?.lastPathComponent ?? ""
            name = (last.isEmpty || last == "/") ? (parsed?.host ?? url) : last
        case .local(let path):
            name = (path as NSString).lastPathComponent
        }
        let decoded = name.removingPercentEncoding ?? name
        return decoded.lowercased().hasSuffix(".pdf") ? String(decoded.dropLast(4)) : decoded
    }
}

extension Library {
    /// Adds each input (URL or path), up to `jobs` at a time. One input's failure doesn't stop
    /// the others; the outcomes come back in input order. `observer` is told as pages are read
    /// from their image, by input.
    public func add(
        _ inputs: [String], options: AddOptions, jobs: Int = 4, progress: (any DownloadProgress)? = nil,
        observer: (any RecognitionObserver)? = nil
    ) async -> [AddOutcome] {
        var configured = Fetcher(store: blobs, maxSize: options.maxSize, downloader: downloader)
        configured.progress = progress
        configured.timeout = options.timeout
        let fetcher = configured
        // Inputs are fetched and read side by side, and saved in the order given: new books get
        // their ids in argument order, whichever finished reading first.
        let turns = CommitTurns()
        // One input's failure is its outcome; the others go on.
        return await Array(inputs.enumerated()).concurrentMap(width: jobs) { index, input in
            defer { turns.finish(index) }
            do {
                let (book, duplicate) = try await self.addOne(
                    input, options: options, fetcher: fetcher, observer: observer,
                    turn: { await turns.wait(for: index) })
                return AddOutcome(input: input, book: book, duplicate: duplicate)
            } catch {
                return AddOutcome(input: input, duplicate: false, error: error.localizedDescription, failure: error)
            }
        }
    }

    func addOne(
        _ input: String, options: AddOptions, fetcher: Fetcher, observer: (any RecognitionObserver)? = nil,
        turn: @Sendable () async -> Void = {}
    ) async throws -> (BookInfo, Bool) {
        let kind = try InputKind(input)
        let staged: StagedFile
        switch kind {
        case .remote(let url):
            // A URL the library knows is revalidated: a 304 transfers nothing.
            let known = try await repository.read { store -> (Book, Source)? in
                guard let source = try store.first(Query<Source>().filter(Source.Fields.url == url)),
                    let book = try store.find(Book.self, id: source.bookId)
                else { return nil }
                return (book, source)
            }
            let validators = known.map { Validators(etag: $0.1.etag, lastModified: $0.1.lastModified) }
            let usable = known.map { blobs.contains($0.0.sha256) } == true && validators?.isEmpty == false
            switch try await fetcher.download(url: url, revalidate: usable ? validators : nil) {
            case .notModified:
                guard let (book, _) = known else { throw MarginError.io("\(url): unexpected 304") }
                try await database.addTags(normalizedTags(options.tags), toBook: book.id ?? 0, now: Date())
                return (try await info(book), true)
            case .staged(let file):
                staged = file
            }
        case .local(let path): staged = try fetcher.stageLocal(path: path)
        }
        defer { try? FileManager.default.removeItem(atPath: staged.path) }
        let facts = try checkPDF(
            head: staged.head, tail: staged.tail, count: staged.bytes, path: staged.path,
            password: options.password, input: input)
        // Index before the write: a book that can't be indexed is not added at all.
        let known = try await repository.read { store in
            try store.first(Query<Book>().filter(Book.Fields.sha256 == staged.sha256))
        }
        let extracted: ExtractedText? =
            known?.indexedAt != nil
            ? nil
            : try extractText(
                path: staged.path,
                password: facts.needsPassword ? options.password ?? known.flatMap { try? password(of: $0) } : nil,
                pageCount: facts.pages, known: try await recognizedPages(of: staged.sha256),
                pagesRead: observer.pages(of: input))
        // Stored sealed; "" marks an encrypted PDF that opens without a password.
        let stored =
            facts.needsPassword
            ? try options.password.map { try secrets.seal($0, sha256: staged.sha256) } : (facts.encrypted ? "" : nil)
        // Asked to, what Crossref or arXiv say the work is (a failure adds nothing).
        var lookedUp: LookedUp?
        if options.lookup, known == nil {
            var described = Book(sha256: "", title: "", author: nil, pages: 0, bytes: 0)
            describe(&described, found: extracted?.found, source: kind.sourceURL)
            lookedUp = try await lookUp(doi: described.doi, arxiv: described.arxiv)
        }
        let found = lookedUp
        // Saved in the order the inputs were given (read side by side, up to here).
        await turn()
        return try await Interruption.critical {
            try await record(
                staged, kind: kind, facts: facts, extracted: extracted, lookedUp: found, options: options,
                password: stored)
        }
    }

    /// Places the staged file in the cache and records the book; removes a newly placed file
    /// again when the write fails.
    private func record(
        _ staged: StagedFile, kind: InputKind, facts: PDFFacts, extracted: ExtractedText?, lookedUp: LookedUp?,
        options: AddOptions, password: String?
    ) async throws -> (BookInfo, Bool) {
        let placedNew = try blobs.place(staged.path, sha256: staged.sha256)
        do {
            let now = Date()
            let found = extracted?.found
            var book = Book(
                sha256: staged.sha256,
                title: nonEmpty(options.title) ?? found?.title ?? facts.title ?? kind.fallbackTitle,
                author: nonEmpty(options.author) ?? found?.author
                    ?? facts.author.flatMap(MetadataDetector.usableAuthor),
                pages: facts.pages, bytes: staged.bytes, folder: normalizedFolder(options.folder),
                password: password, now: now)
            describe(&book, found: found, source: kind.sourceURL)
            if let lookedUp {
                book.title = nonEmpty(options.title) ?? lookedUp.title ?? book.title
                book.author = nonEmpty(options.author) ?? lookedUp.author ?? book.author
                if let year = lookedUp.year {
                    book.year = year
                    book.yearSource = lookedUp.service
                }
                book.workType = lookedUp.workType ?? book.workType
                book.venue = lookedUp.venue ?? book.venue
                book.publisher = lookedUp.publisher ?? book.publisher
                book.doi = lookedUp.doi ?? book.doi
                book.arxiv = lookedUp.arxiv ?? book.arxiv
            }
            // A title or author is one line, wherever it came from (metadata holds raw newlines).
            book.title = singleLine(expandLigatures(book.title))
            book.author = book.author.map { singleLine(expandLigatures($0)) }
            if nonEmpty(options.title) != nil { book.userFields.append("title") }
            if nonEmpty(options.author) != nil { book.userFields.append("author") }
            let source = Source(
                bookId: 0, url: kind.sourceURL, etag: staged.etag, lastModified: staged.lastModified, now: now)
            let added = try await database.addBook(
                book, source: source, tags: normalizedTags(options.tags), text: extracted, now: now)
            return (try await info(added.book), added.existed)
        } catch {
            if placedNew { blobs.remove(staged.sha256) }
            throw error
        }
    }
}

/// Fills what a book is from what its PDF says and the address it came from (an arxiv.org or
/// doi.org address names the work for certain).
func describe(_ book: inout Book, found: FoundMetadata?, source: String?) {
    let fromURL = source.map { (Identifiers.arxiv(inURL: $0), Identifiers.doi(inURL: $0)) }
    book.arxiv = fromURL?.0 ?? found?.arxiv
    book.doi = fromURL?.1 ?? found?.doi
    if let year = found?.year {
        book.year = year
        book.yearSource = found?.yearSource ?? YearSource.document
    } else {
        book.year = book.arxiv.flatMap(Identifiers.year(ofArxiv:))
        book.yearSource = book.year == nil ? nil : YearSource.document
    }
    book.venue = found?.venue
}

/// Tags as stored: "a,b" is two tags; white space (line breaks too) collapsed to one space;
/// control characters dropped; each tag once.
public func normalizedTags(_ names: [String]) -> [String] {
    var seen = Set<String>()
    return names.flatMap { $0.split(separator: ",") }.compactMap { part -> String? in
        let words = part.unicodeScalars.filter {
            $0.properties.generalCategory != .control || $0.properties.isWhitespace
        }
        let tag = String(String.UnicodeScalarView(words)).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return tag.isEmpty || !seen.insert(tag).inserted ? nil : tag
    }
}

/// A folder as stored: "papers//ml/" and " papers / ml " are "papers/ml"; nil when empty.
public func normalizedFolder(_ folder: String?) -> String? {
    guard let folder else { return nil }
    let parts = folder.split(separator: "/").map { part in
        String(part.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }.filter { !$0.isEmpty }
    return parts.isEmpty ? nil : parts.joined(separator: "/")
}

func nonEmpty(_ value: String?) -> String? {
    guard let value = value?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
    return value
}

/// Lets work done side by side commit in a fixed order: `wait(for: i)` returns once every index
/// below `i` has finished (committed, failed, or had nothing to commit).
final class CommitTurns: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = Set<Int>()
    private var firstUnfinished = 0
    private var waiting = [(index: Int, continuation: CheckedContinuation<Void, Never>)]()

    func wait(for index: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = lock.withLock {
                if firstUnfinished >= index { return true }
                waiting.append((index, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func finish(_ index: Int) {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            finished.insert(index)
            while finished.contains(firstUnfinished) { firstUnfinished += 1 }
            let due = waiting.filter { $0.index <= firstUnfinished }
            waiting.removeAll { $0.index <= firstUnfinished }
            return due.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }
}
