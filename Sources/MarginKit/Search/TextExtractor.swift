import Foundation
import MarginCore

/// The text of every page of a PDF, extracted on all cores: each worker opens its own poppler
/// document (poppler objects are not thread-safe) and takes a contiguous run of pages.
typealias ExtractedText = PagesText

extension Library {
    /// What recognition read on the book's other files (its versions but `sha256`): the pages
    /// drawn for it, by their image.
    func recognizedPages(ofOtherFilesOf book: Book, except sha256: String) async throws -> [OCRPage] {
        guard configuration.ocr.mode != .never, let id = book.id else { return [] }
        return try await repository.read { store in
            let files = try store.fetch(Query<Version>().filter(Version.Fields.bookId == id)).map(\.sha256)
                .filter { $0 != sha256 }
            guard !files.isEmpty else { return [] }
            return try store.fetch(Query<OCRPage>().filter(OCRPage.Fields.sha256.isIn(files))).filter {
                $0.image != nil
            }
        }
    }

    /// What recognition read before on the pages of the PDF `sha256`.
    func recognizedPages(of sha256: String) async throws -> [OCRPage] {
        guard configuration.ocr.mode != .never else { return [] }
        return try await repository.read { store in
            try store.fetch(Query<OCRPage>().filter(OCRPage.Fields.sha256 == sha256))
        }
    }

    /// The text of every page of the PDF at `path`, within this library's configured limits.
    /// Pages without a usable text layer are recognized from their image as `configuration.ocr`
    /// says, except those `known` holds (read before, kept by the PDF's SHA-256: see
    /// `recognizedPages`), whose words are used again.
    /// `similar`: what was read on other files of the book (its other versions): a page drawn
    /// as one of theirs takes its words. `pagesRead` is told as pages are read from their image.
    func extractText(
        path: String, password: String?, pageCount: Int, known: [OCRPage] = [], similar: [OCRPage] = [],
        ocr: OCRSettings? = nil, pagesRead: TextExtractor.PagesRead? = nil
    ) throws -> ExtractedText {
        var configuration = self.configuration
        if let ocr { configuration.ocr = ocr }
        let reused = configuration.ocr.mode == .never ? [] : known.filter { (1...max(pageCount, 1)).contains($0.page) }
        let byImage = Dictionary(
            similar.compactMap { page in page.image.map { ($0, page) } }, uniquingKeysWith: { first, _ in first })
        var text: ExtractedText
        do {
            text = try TextExtractor.extract(
                path: path, password: password, pageCount: pageCount, configuration: configuration,
                recognized: Set(reused.map(\.page)), images: Set(byImage.keys), pagesRead: pagesRead)
        } catch MarginError.popplerLimit where configuration.ocr.mode != .never {
            // Reading the pages' images stopped the child (a hostile image, past its limits): the
            // book's own text is still read, and its scanned pages stay without text.
            configuration.ocr.mode = .never
            text = try TextExtractor.extract(
                path: path, password: password, pageCount: pageCount, configuration: configuration)
        }
        // Pages drawn as pages read in another file: their words.
        text.ocr = text.ocr.compactMap { page in
            guard page.engine == OCRPage.sameImage else { return page }
            guard let image = page.image, var same = byImage[image], page.page <= text.pages.count else { return nil }
            same.id = nil
            same.uuid = UUID()
            same.sha256 = ""
            same.page = page.page
            text.pages[page.page - 1].text = same.readingText.text
            return same
        }
        let fresh = Set(text.ocr.map(\.page))
        let kept = reused.filter { !fresh.contains($0.page) }
        for page in kept where page.page <= text.pages.count {
            text.pages[page.page - 1].text = page.readingText.text
        }
        text.ocr = (kept + text.ocr).sorted { $0.page < $1.page }
        // The index's words are worked out here, on all cores, so the write that stores the
        // pages (one at a time, for the whole library) doesn't.
        let words = parallelMap(text.pages.map(\.text), indexedWords(of:))
        for index in text.pages.indices { text.pages[index].indexedWords = words[index] }
        return text
    }
}

enum TextExtractor {
    /// Pages a worker takes at a time: small enough to balance uneven pages between workers.
    static let chunk = 8
    /// Pages a worker reads before it opens the document again (to drop poppler's page cache).
    static let pagesPerOpen = 5_000
    /// Books longer than this are read by one worker.
    static let longBook = 20_000
    /// PDFs up to this size are read from one mapping of the file that all workers share;
    /// larger ones by path (a mapping takes address space, of which the extractor has a limit).
    static let mappedUpTo = 256 << 20

    /// The text of every page, read in a child process with a time and memory limit when the
    /// executable offers one (`PopplerIsolation`), else here.
    static func extract(
        path: String, password: String?, pageCount: Int, configuration: Configuration, recognized: Set<Int> = [],
        images: Set<String> = [], pagesRead: PagesRead? = nil
    ) throws -> ExtractedText {
        if let helper = configuration.extractionHelper {
            return try PopplerIsolation.extract(
                helper: helper, path: path, password: password, pageCount: pageCount, configuration: configuration,
                recognized: recognized, images: images, pagesRead: pagesRead)
        }
        return try extractInProcess(
            path: path, password: password, pageCount: pageCount, workers: configuration.extractWorkers,
            ocr: configuration.ocr, recognized: recognized, images: images, pagesRead: pagesRead)
    }

    /// Told as a book's pages are read from their image: (pages read, pages to read).
    typealias PagesRead = @Sendable (Int, Int) -> Void

    /// The text of every page, read here: first each page's own text, on all cores; then the
    /// pages without a usable one (as `ocr` says) from their image, one page at a time to each
    /// worker, telling `pagesRead` after each.
    static func extractInProcess(
        path: String, password: String?, pageCount: Int, workers: Int? = nil, ocr: OCRSettings = OCRSettings(),
        recognized: Set<Int> = [], images: Set<String> = [], pagesRead: PagesRead? = nil
    ) throws -> ExtractedText {
        guard pageCount > 0 else { return ExtractedText(pages: []) }
        // Each worker opens the document, and poppler holds a document's whole page tree (about
        // 1.7 KB a page): a very long book is read by one worker, so memory stays that of one.
        let cores = pageCount > Self.longBook ? 1 : ProcessInfo.processInfo.activeProcessorCount
        let count = max(1, min(workers ?? cores, (pageCount + chunk - 1) / chunk, 16))
        let queue = ChunkQueue(pageCount: pageCount, chunk: chunk)
        let results = WorkerResults(count: count)
        let about = AboutSlot()
        let toRecognize = PageList()
        // Read from a mapping unless it needs a password (see `PDFEngine.open(mapped:)`).
        let engine = PDFEngines.current
        let mapped = password == nil ? engine.map(path: path, limit: Self.mappedUpTo) : nil
        @Sendable func open() throws -> any PDFDocument {
            if let mapped { return try engine.open(mapped: mapped) }
            return try engine.open(path: path, password: password)
        }
        let firstPages = 1...MetadataDetector.firstPages
        DispatchQueue.concurrentPerform(iterations: count) { worker in
            do {
                var document = try open()
                var pages = [PageText]()
                var read = 0
                while let range = queue.next() {
                    // Poppler keeps every page it has loaded until the document closes: opened
                    // anew now and then, a book of any length costs the same memory.
                    if read >= Self.pagesPerOpen {
                        document = try open()
                        read = 0
                    }
                    read += range.count
                    var first: (any PDFPage)?
                    for number in range {
                        // A damaged page has no text to give; the rest of the book still does.
                        var page = PageText(bookId: 0, number: number, text: "")
                        do {
                            let loaded = try document.page(number)
                            page.text = loaded.readingTextOnly()
                            page.label = loaded.label
                            if number == 1 { first = loaded }
                            if Recognition.wanted(number, text: page.text, settings: ocr, known: recognized) {
                                toRecognize.add(number)
                            }
                        } catch PDFError.pageUnreadable {}
                        pages.append(page)
                    }
                    // The run with the first pages also reads what the document says it is, unless
                    // they are to be read from their image first (then it is read after them).
                    if range.contains(1), !firstPages.contains(where: toRecognize.contains) {
                        let firstText = pages.filter { firstPages.contains($0.number) }.map(\.text)
                        about.set(
                            describe(
                                document, first: first, recognized: nil, firstText: firstText, path: path,
                                password: password))
                    }
                }
                results.set(worker, .success(pages))
            } catch {
                queue.cancel()
                results.set(worker, .failure(error))
            }
        }
        var pages = [PageText]()
        pages.reserveCapacity(pageCount)
        for result in results.all() {
            pages += try result.get()
        }
        pages.sort { $0.number < $1.number }
        let read = try recognize(
            toRecognize.sorted(), open: open, settings: ocr, images: images, workers: min(workers ?? cores, 16),
            pagesRead: pagesRead)
        for words in read where words.page <= pages.count { pages[words.page - 1].text = words.readingText.text }
        if !about.isSet {
            let document = try open()
            let first = try? document.page(1)
            let firstText = pages.filter { firstPages.contains($0.number) }.map(\.text)
            about.set(
                describe(
                    document, first: first, recognized: read.first { $0.page == 1 }, firstText: firstText, path: path,
                    password: password))
        }
        let (outline, found) = about.get()
        let labels = pages.map { $0.label ?? "" }
        return ExtractedText(
            pages: pages,
            guide: BookGuide(bookId: 0, labels: labels.allSatisfy(\.isEmpty) ? nil : labels, outline: outline),
            found: found, ocr: read)
    }

    /// The document's outline and what its first pages say it is; `recognized`: page 1's words
    /// when it was read from its image.
    private static func describe(
        _ document: any PDFDocument, first: (any PDFPage)?, recognized: OCRPage?, firstText: [String], path: String,
        password: String?
    ) -> ([OutlineItem], FoundMetadata) {
        let height = first?.size.height ?? 0
        let lines = recognized.map { $0.textLines(pageHeight: height) } ?? first?.textLines() ?? []
        let outline = completedOutline(document.outline(), path: path, password: password).map {
            OutlineItem(title: $0.title, page: $0.page, level: $0.level)
        }
        return (
            outline,
            MetadataDetector.detect(
                document, firstPage: lines, pageHeight: height, firstText: firstText.joined(separator: "\n"))
        )
    }

    /// Reads `numbers` from their image, one page at a time to each of up to `workers` workers
    /// (each with its own document), telling `pagesRead` after each page. Nothing when no
    /// recognizer is there under `auto`.
    private static func recognize(
        _ numbers: [Int], open: @Sendable () throws -> any PDFDocument, settings: OCRSettings, images: Set<String>,
        workers: Int, pagesRead: PagesRead?
    ) throws -> [OCRPage] {
        let gate = RecognizerGate(settings)
        guard !numbers.isEmpty, try gate.engineName() != nil else { return [] }
        let queue = ChunkQueue(pages: numbers)
        let count = max(1, min(workers, numbers.count))
        let results = OCRResults()
        let failure = FirstFailure()
        pagesRead?(0, numbers.count)
        DispatchQueue.concurrentPerform(iterations: count) { _ in
            do {
                let document = try open()
                while let number = queue.nextPage() {
                    do {
                        if let words = try Recognition.readOrSkip(
                            document.page(number), languages: settings.languages, gate: gate, images: images)
                        {
                            results.add(words)
                        }
                    } catch PDFError.pageUnreadable {}
                    pagesRead?(results.done(), numbers.count)
                }
            } catch {
                queue.cancel()
                failure.set(error)
            }
        }
        try failure.check()
        return results.all()
    }
}

/// The outline and metadata the worker with page 1 read.
private final class AboutSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var outline = [OutlineItem]()
    private var found: FoundMetadata?

    func set(_ about: ([OutlineItem], FoundMetadata)) {
        lock.withLock { (outline, found) = about }
    }

    var isSet: Bool { lock.withLock { found != nil } }

    func get() -> ([OutlineItem], FoundMetadata?) {
        lock.lock()
        defer { lock.unlock() }
        return (outline, found)
    }
}

/// Hands out runs of pages (or pages of a list, one at a time) to workers until none are left.
private final class ChunkQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var cursor = 1
    private let pageCount: Int
    private let chunk: Int
    private let list: [Int]

    init(pageCount: Int, chunk: Int) {
        self.pageCount = pageCount
        self.chunk = chunk
        list = []
    }

    init(pages: [Int]) {
        list = pages
        pageCount = pages.count
        chunk = 1
    }

    /// The next page of the list.
    func nextPage() -> Int? {
        lock.withLock {
            guard cursor <= pageCount else { return nil }
            cursor += 1
            return list[cursor - 2]
        }
    }

    func next() -> ClosedRange<Int>? {
        lock.lock()
        defer { lock.unlock() }
        guard cursor <= pageCount else { return nil }
        let range = cursor...min(pageCount, cursor + chunk - 1)
        cursor = range.upperBound + 1
        return range
    }

    func cancel() {
        lock.lock()
        cursor = pageCount + 1
        lock.unlock()
    }
}

private final class WorkerResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<[PageText], any Error>]

    init(count: Int) {
        results = Array(repeating: .success([]), count: count)
    }

    func set(_ index: Int, _ result: Result<[PageText], any Error>) {
        lock.lock()
        results[index] = result
        lock.unlock()
    }

    func all() -> [Result<[PageText], any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}

/// `transform` of every element, on all cores (each worker takes every n-th element).
func parallelMap<T: Sendable, R>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
    guard !items.isEmpty else { return [] }
    let results = ResultSlots<R>(count: items.count)
    let workers = max(1, min(items.count, ProcessInfo.processInfo.activeProcessorCount))
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
        var index = worker
        while index < items.count {
            results.set(index, transform(items[index]))
            index += workers
        }
    }
    return results.values()
}

/// One slot a result, each written by one worker only.
private final class ResultSlots<R>: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<R?>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }

    func set(_ index: Int, _ value: R) { slots[index] = value }

    func values() -> [R] { slots.map { $0! } }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
}

/// The pages the workers recognized.
private final class OCRResults: @unchecked Sendable {
    private let lock = NSLock()
    private var pages = [OCRPage]()

    private var finished = 0

    func add(_ page: OCRPage) { lock.withLock { pages.append(page) } }
    /// Counts one more page done (read or not); how many are.
    func done() -> Int {
        lock.withLock {
            finished += 1
            return finished
        }
    }
    func all() -> [OCRPage] { lock.withLock { pages.sorted { $0.page < $1.page } } }
}

/// Page numbers noted by several workers.
private final class PageList: @unchecked Sendable {
    private let lock = NSLock()
    private var numbers = Set<Int>()

    func add(_ number: Int) { lock.withLock { _ = numbers.insert(number) } }
    func contains(_ number: Int) -> Bool { lock.withLock { numbers.contains(number) } }
    func sorted() -> [Int] { lock.withLock { numbers.sorted() } }
}

/// The first error of several workers.
private final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?

    func set(_ error: any Error) { lock.withLock { if self.error == nil { self.error = error } } }
    func check() throws { if let error = lock.withLock({ error }) { throw error } }
}
