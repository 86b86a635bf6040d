import Foundation

// The ports through which the use cases read and draw PDFs. Only their adapter (the `Poppler`
// target, `PopplerEngine`) sees the library that implements them; the executables install it
// (`PDFEngines.install`) before anything runs. A page's text may come from the PDF's text layer
// or from recognition of its image (`PageTextSource`): the use cases read both the same way.

/// What a page gives to read: its text, the box of each character, its lines, and matches.
/// Boxes are in PDF user space (points, origin at the bottom left) unless said otherwise.
public protocol PDFPageText: AnyObject {
    /// 1-based page number.
    var number: Int { get }
    /// Width and height in PDF points.
    var size: (width: Double, height: Double) { get }
    /// The page's label as the PDF prints its number ("xii"); nil when it gives none.
    var label: String? { get }
    /// The text in the engine's reading order; empty for a page without text.
    var text: String { get }
    /// The text as a reader reads it (words set apart, paragraphs parted) with the box of each
    /// scalar, and where it came from.
    func readingText() -> ReadingText
    /// The text of `readingText()` alone (what the index stores).
    func readingTextOnly() -> String
    /// The box of each Unicode scalar of `text`; nil when the engine has no layout for the page.
    func characterBoxes() -> [PDFRect]?
    /// Every occurrence of `text` (case-insensitive unless asked, accents ignored, across line
    /// breaks), one rectangle per line it spans.
    func find(_ text: String, caseSensitive: Bool) -> [TextMatch]
    /// The text whose characters lie inside the rectangles: a strict crop.
    func text(in rects: [PDFRect]) -> String
    /// The page's lines with font size and place (top-left origin): what a title is told by.
    func textLines() -> [TextLine]
    /// Where the page's text comes from.
    var textSource: PageTextSource { get }
}

extension PDFPageText {
    public var textSource: PageTextSource { .textLayer }
    public func find(_ text: String) -> [TextMatch] { find(text, caseSensitive: false) }
    public func text(in rect: PDFRect) -> String { text(in: [rect]) }
}

/// Drawing a page: to a file (PNG, SVG, PDF) or PNG bytes, with rectangles drawn over it.
public protocol PDFPageRendering: AnyObject {
    /// The size in pixels of a rendering at `dpi`.
    func pixelSize(dpi: Double) -> (width: Int, height: Int)
    func render(to path: String, format: RenderFormat, dpi: Double, overlays: [Overlay]) throws
    func renderPNG(dpi: Double, overlays: [Overlay]) throws -> Data
    /// The page in 8-bit gray at `dpi`, for recognition.
    func renderGray(dpi: Double) throws -> GrayImage
}

/// A page's own annotations (what other readers wrote into the PDF), and adding to them.
public protocol PDFPageMarkup: AnyObject {
    var annotations: [PageAnnotation] { get }
    /// Adds a highlight covering `rects` (one quadrilateral each).
    func addHighlight(_ rects: [PDFRect], color: RGB, contents: String?, author: String?)
    /// Adds a sticky note at the top left of `at`.
    func addNote(at point: (x: Double, y: Double), contents: String, color: RGB, author: String?)
}

/// One page of an open document.
public typealias PDFPage = PDFPageText & PDFPageRendering & PDFPageMarkup

/// An open PDF. Not thread-safe: one per thread.
public protocol PDFDocument: AnyObject {
    var pageCount: Int { get }
    /// Some permission (print, copy, change…) is withheld by an owner password.
    var isRestricted: Bool { get }
    /// /Title, /Author, /Subject, /Keywords: trimmed, nil when absent or blank.
    var title: String? { get }
    var author: String? { get }
    var subject: String? { get }
    var keywords: String? { get }
    /// The XMP metadata packet, when the PDF has one.
    var xmp: String? { get }
    var creationDate: Date? { get }
    /// The page with the 1-based `number` (`PDFError.pageOutOfRange` outside the document).
    func page(_ number: Int) throws -> any PDFPage
    /// The outline in reading order, at most `limit` entries.
    func outline(limit: Int) -> [OutlineEntry]
    /// Writes the document, with any annotations added, to `path`.
    func save(to path: String) throws
}

extension PDFDocument {
    public func outline() -> [OutlineEntry] { outline(limit: 20_000) }
}

/// A PDF file held in memory for documents opened from it, on any thread.
public protocol MappedPDFFile: AnyObject, Sendable {}

/// Opens PDFs. `PDFEngines.current` is the one the process installed.
public protocol PDFEngine: Sendable {
    /// Opens the PDF at `path` (`PDFError.passwordRequired`/`.wrongPassword` when encrypted,
    /// `.unreadable` when it isn't a PDF the engine reads).
    func open(path: String, password: String?) throws -> any PDFDocument
    /// Maps the file, for documents opened from memory; nil when it is larger than `limit`
    /// bytes or can't be mapped (open it by path then).
    func map(path: String, limit: Int) -> (any MappedPDFFile)?
    /// Opens a document from a file `map` gave (no password).
    func open(mapped: any MappedPDFFile) throws -> any PDFDocument
    /// Loads the engine's library now rather than when the first PDF is opened.
    func loadNow()
}

extension PDFEngine {
    public func open(path: String) throws -> any PDFDocument { try open(path: path, password: nil) }
}

/// The engine the process installed: set once by `main` (and by test suites) before any PDF
/// is opened.
public enum PDFEngines {
    private static let installed = Installed<any PDFEngine>()

    public static func install(_ engine: any PDFEngine) { installed.install(engine) }

    /// The installed engine; one that reports a clear error when none was installed.
    public static var current: any PDFEngine { installed.value ?? MissingEngine() }
}

private struct MissingEngine: PDFEngine {
    private var error: PDFError { .libraryMissing("no PDF engine is installed in this program") }
    func open(path: String, password: String?) throws -> any PDFDocument { throw error }
    func map(path: String, limit: Int) -> (any MappedPDFFile)? { nil }
    func open(mapped: any MappedPDFFile) throws -> any PDFDocument { throw error }
    func loadNow() {}
}

extension PDFPageRendering {
    public func render(to path: String, format: RenderFormat, dpi: Double = 72) throws {
        try render(to: path, format: format, dpi: dpi, overlays: [])
    }

    public func renderPNG(dpi: Double = 72) throws -> Data { try renderPNG(dpi: dpi, overlays: []) }
}

/// The adapter a process installs for a port: set by `main` (and test suites) before it is used.
public final class Installed<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var installed: Value?

    public init() {}

    public func install(_ value: Value) { lock.withLock { installed = value } }

    public var value: Value? { lock.withLock { installed } }
}
