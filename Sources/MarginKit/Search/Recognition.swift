import Crypto
import Foundation
import MarginCore

/// Reading a page from its image: drawn by the PDF engine in gray, read by the installed
/// `TextRecognizer`, its words placed in PDF user space as the page's own text would be.
enum Recognition {
    /// The resolution pages are drawn at for recognition: what Tesseract reads best; a scan
    /// stored at less is drawn up to it.
    static let dpi = 300.0
    /// At most this many pixels a page (a large poster is drawn at less than `dpi`).
    static let maxPixels = 50_000_000
    /// Tesseract reads images up to 32,767 pixels a side.
    static let maxSide = 30_000
    /// A page drawn narrower or lower than this holds nothing to read (a strip).
    static let minSide = 16

    /// Whether page `number`, whose own text is `text`, is to be recognized.
    static func wanted(_ number: Int, text: String, settings: OCRSettings, known: Set<Int>) -> Bool {
        guard settings.mode != .never, settings.pages?.contains(number) ?? true else { return false }
        if known.contains(number) && !settings.force { return false }
        return settings.mode == .always || !TextLayer.isUsable(text)
    }

    /// The resolution page `size` (points) is drawn at: `dpi`, less for a page too large.
    static func resolution(for size: (width: Double, height: Double)) -> Double? {
        let width = max(size.width, 1) / 72
        let height = max(size.height, 1) / 72
        let byPixels = (Double(maxPixels) / (width * height)).squareRoot()
        let bySide = Double(maxSide) / max(width, height)
        let chosen = min(dpi, byPixels, bySide)
        guard width * chosen >= Double(minSide), height * chosen >= Double(minSide) else { return nil }
        return chosen
    }

    /// What recognition reads on `page`, or nil when it is not to be read (no recognizer under
    /// `auto`) or can't be (a damaged image, an engine failure: the page stays without text,
    /// counted as textless, and the rest of the book is read). A blank page is glanced at and
    /// kept as read, without words, before the engine is even started.
    static func readOrSkip(_ page: any PDFPage, languages: String, gate: RecognizerGate, images: Set<String> = [])
        throws -> OCRPage?
    {
        let size = page.size
        guard let dpi = resolution(for: size), let engine = try gate.engineName() else { return nil }
        if let glance = try? page.renderGray(dpi: min(glanceDPI, dpi)), isBlank(glance) {
            return OCRPage(sha256: "", page: page.number, words: [], engine: engine, languages: languages, dpi: dpi)
        }
        guard let image = try? page.renderGray(dpi: dpi) else { return nil }
        let hash = fingerprint(image)
        if images.contains(hash) {
            // Drawn as a page read before: the caller has its words.
            return OCRPage(
                sha256: "", page: page.number, words: [], engine: OCRPage.sameImage, languages: languages, dpi: dpi,
                image: hash)
        }
        guard let (recognizer, _) = try gate.recognizer() else { return nil }
        return try? place(
            try recognizer.recognize(image, languages: languages), of: page, image: image, hash: hash,
            languages: languages, engine: engine)
    }

    /// The SHA-256 of an image's size and pixels.
    static func fingerprint(_ image: GrayImage) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(image.width)x\(image.height)\n".utf8))
        image.pixels.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The resolution a page is first drawn at to see whether it holds any ink.
    static let glanceDPI = 36.0

    /// Whether a gray image is blank: fewer than one pixel in 2,000 with any ink (darker than 200).
    static func isBlank(_ image: GrayImage) -> Bool {
        var dark = 0
        for pixel in image.pixels where pixel < 200 { dark += 1 }
        return dark * 2_000 < image.pixels.count
    }

    /// The words read on `image` (the page drawn at `image.dpi`), placed in the page's space.
    static func place(
        _ words: [RecognizedWord], of page: any PDFPage, image: GrayImage, hash: String, languages: String,
        engine: String
    ) -> OCRPage {
        let size = page.size
        let dpi = image.dpi
        let scale = 72 / dpi
        let placed = words.map { word in
            OCRWord(
                text: word.text,
                box: PDFRect(
                    x0: Double(word.left) * scale, y0: size.height - Double(word.bottom) * scale,
                    x1: Double(word.right) * scale, y1: size.height - Double(word.top) * scale),
                confidence: word.confidence, paragraph: word.paragraph, line: word.line)
        }
        return OCRPage(
            sha256: "", page: page.number, words: placed, engine: engine, languages: languages, dpi: dpi, image: hash)
    }
}

/// The recognizer of one extraction, checked when the first page needs it (loading a language
/// takes longer than reading most born-digital books): under `auto`, a missing engine or
/// language means no page is recognized; asked for (`always`), it is the extraction's error.
final class RecognizerGate: @unchecked Sendable {
    let settings: OCRSettings
    private let lock = NSLock()
    private var checked: Result<(any TextRecognizer, String)?, any Error>?

    init(_ settings: OCRSettings) { self.settings = settings }

    /// The engine's name ("tesseract 5.3.0"), found without starting it (no language is
    /// loaded); nil when pages are not to be recognized. Under `always` a missing engine is
    /// the error `recognizer()` throws.
    func engineName() throws -> String? {
        guard settings.mode != .never else { return nil }
        if let name = lock.withLock({ named }) { return name }
        guard let name = try? TextRecognizers.current?.engine else {
            if settings.mode == .auto { return nil }
            return try recognizer()?.engine
        }
        lock.withLock { named = name }
        return name
    }
    private var named: String?

    /// The recognizer and its engine's name; nil when pages are not to be recognized.
    func recognizer() throws -> (recognizer: any TextRecognizer, engine: String)? {
        try lock.withLock {
            if let checked { return try checked.get() }
            let result = Result<(any TextRecognizer, String)?, any Error> {
                guard settings.mode != .never else { return nil }
                guard let recognizer = TextRecognizers.current else {
                    if settings.mode == .auto { return nil }
                    throw OCRError.engineMissing("this margin has no text recognizer")
                }
                do {
                    try recognizer.check(languages: settings.languages)
                    return (recognizer, try recognizer.engine)
                } catch  where settings.mode == .auto {
                    return nil
                }
            }
            checked = result
            return try result.get()
        }
    }
}

/// Told how reading pages from their image goes, book by book: a terminal's bar.
public protocol RecognitionObserver: Sendable {
    /// `read` of `total` pages of `name` (an input as given, or a book's title) are read from
    /// their image; the last call for a book has `read == total`.
    func recognizing(_ name: String, read: Int, total: Int)
}

extension Optional where Wrapped == any RecognitionObserver {
    /// The observer told of `name`'s pages, as an extraction tells it.
    func pages(of name: String) -> TextExtractor.PagesRead? {
        guard let observer = self else { return nil }
        return { read, total in observer.recognizing(name, read: read, total: total) }
    }
}

extension Library {
    /// Pages read at a time by `recognize`: what is read is kept after each run of them.
    static let recognitionBatch = 16

    /// Reads a book's pages from their image as `configuration.ocr` says (`margin ocr`), a few
    /// pages at a time, keeping what each run read before the next: an interruption loses at
    /// most the pages being read, and the same command goes on from there. Then the book's text
    /// is replaced with what was read, in one transaction.
    public func recognize(_ book: Book, observer: (any RecognitionObserver)? = nil) async throws -> Book {
        let path = try await ensureCached(book)
        let password = try password(of: book)
        let settings = configuration.ocr
        try await database.checkMayKeepRecognized(of: book.sha256)
        var known = try await recognizedPages(of: book.sha256)
        if settings.force { known.removeAll { settings.pages?.contains($0.page) ?? true } }
        // The pages to read, from the text layer of each.
        var plain = settings
        plain.mode = .never
        let layer = try extractText(path: path, password: password, pageCount: book.pages, ocr: plain)
        let knownPages = Set(known.map(\.page))
        let wanted = layer.pages.map(\.number).filter { number in
            Recognition.wanted(
                number, text: layer.pages[number - 1].text, settings: settings, known: knownPages)
        }
        observer?.recognizing(book.title, read: 0, total: wanted.count)
        var done = 0
        for start in stride(from: 0, to: wanted.count, by: Self.recognitionBatch) {
            try Task.checkCancellation()
            let batch = Array(wanted[start..<min(start + Self.recognitionBatch, wanted.count)])
            var some = settings
            some.pages = Set(batch)
            some.force = true
            let before = done
            let read = try extractText(path: path, password: password, pageCount: book.pages, ocr: some) {
                read, _ in observer?.recognizing(book.title, read: before + read, total: wanted.count)
            }.ocr
            try await database.keepRecognized(read, of: book.sha256)
            known.removeAll { batch.contains($0.page) }
            known += read
            done += batch.count
        }
        // Every page read is known now: the text is made without reading any again.
        var all = settings
        all.force = false
        all.pages = []
        let text = try extractText(path: path, password: password, pageCount: book.pages, known: known, ocr: all)
        return try await database.replaceText(ofBook: book.id ?? -1, with: text, now: Date()) ?? book
    }
}
