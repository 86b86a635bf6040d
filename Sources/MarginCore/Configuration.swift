import Foundation

/// Every setting Margin takes from outside its command line, read once by the executable
/// (`Configuration(environment:)`) and handed to the library; nothing below the executable reads
/// the environment. Tests build one with the values they need.
public struct Configuration: Sendable, Equatable {
    /// Attempts after the first on connection errors, cuts and 5xx (MARGIN_RETRIES).
    public var retries = 3
    /// Seconds before the first retry; each later one waits twice as long (MARGIN_RETRY_DELAY_MS).
    public var retryDelay = 0.5
    /// Seconds without a byte from the server before an attempt is given up (MARGIN_IDLE_TIMEOUT).
    public var idleTimeout: Int64 = 30
    /// Seconds over which a download must bring at least 1 KiB a second (MARGIN_STALL_SECONDS).
    public var stallWindow = 60.0
    /// Seconds one `--regex` search may take (MARGIN_REGEX_TIMEOUT).
    public var regexTimeout = 20.0
    /// Seconds poppler may work on one PDF; nil for 20 s plus half a second a page
    /// (MARGIN_POPPLER_TIMEOUT).
    public var popplerTimeout: Double?
    /// Megabytes of address space the text extractor may use (MARGIN_POPPLER_MEMORY_MB).
    public var popplerMemoryMB: UInt64 = 4096
    /// Threads extracting one book's text; nil for one a core (MARGIN_EXTRACT_WORKERS).
    public var extractWorkers: Int?
    /// The executable that extracts text in a child process under the limits above; nil to
    /// extract in this process (tests of the library alone).
    public var extractionHelper: String?

    /// Where metadata is looked up (`--lookup`): Crossref's REST API and arXiv's query API.
    public var crossrefURL = "https://api.crossref.org"
    public var arxivURL = "https://export.arxiv.org/api"
    /// The longest one lookup may take, in seconds.
    public var lookupTimeout = 20.0
    /// An e-mail address sent with lookups (Crossref's "polite pool"), when given.
    public var contact: String?

    /// When pages are recognized from their image, and in which languages.
    public var ocr = OCRSettings()

    public init() {}

    /// The settings the environment gives; anything unset or malformed keeps its default.
    public init(environment: [String: String]) {
        func number(_ name: String) -> Double? { environment[name].flatMap(Double.init) }
        if let value = environment["MARGIN_RETRIES"].flatMap({ Int($0) }) { retries = max(0, value) }
        if let value = number("MARGIN_RETRY_DELAY_MS") { retryDelay = max(0, value) / 1000 }
        if let value = environment["MARGIN_IDLE_TIMEOUT"].flatMap({ Int64($0) }) { idleTimeout = max(1, value) }
        if let value = number("MARGIN_STALL_SECONDS") { stallWindow = max(0.1, value) }
        if let value = number("MARGIN_REGEX_TIMEOUT") { regexTimeout = max(0.1, value) }
        if let value = number("MARGIN_POPPLER_TIMEOUT") { popplerTimeout = max(0.1, value) }
        if let value = environment["MARGIN_POPPLER_MEMORY_MB"].flatMap({ UInt64($0) }) { popplerMemoryMB = value }
        if let value = environment["MARGIN_EXTRACT_WORKERS"].flatMap({ Int($0) }) { extractWorkers = value }
        if let value = environment["MARGIN_CROSSREF_URL"], !value.isEmpty { crossrefURL = value }
        if let value = environment["MARGIN_ARXIV_URL"], !value.isEmpty { arxivURL = value }
        if let value = number("MARGIN_LOOKUP_TIMEOUT"), value > 0 { lookupTimeout = value }
        if let value = environment["MARGIN_CONTACT"], !value.isEmpty { contact = value }
        if let value = environment["MARGIN_OCR_LANG"], !value.isEmpty { ocr.languages = value }
    }

    /// Seconds poppler may take over a PDF of `pages` pages (with time to recognize each one
    /// when pages may be recognized: about two seconds a page on one core, counted at thirty).
    public func popplerTimeLimit(pages: Int) -> Double {
        popplerTimeout ?? 20 + Double(pages) * (ocr.mode == .never ? 0.5 : 30)
    }

    /// Bytes of address space the text extractor may use (at least 256 MB).
    public var popplerMemoryLimit: UInt64 { max(256, popplerMemoryMB) << 20 }
}

/// When pages are recognized from their image (OCR), and in which languages.
public struct OCRSettings: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Pages without a usable text layer (`TextLayer.isUsable`), when the engine and the
        /// language data are installed.
        case auto
        /// Every page, those with text too.
        case always
        /// None.
        case never
    }

    public var mode = Mode.auto
    /// Tesseract's languages, `+` between them ("eng+deu").
    public var languages = "eng"
    /// Recognize these pages again even when the store has them (`margin ocr --force`).
    public var force = false
    /// Only these pages are recognized (`margin ocr --pages`); nil for all.
    public var pages: Set<Int>?

    public init() {}
}
