import Foundation
import MarginCore

/// Tesseract 5 through its C API (`tesseract/capi.h`), as the process's `TextRecognizer`.
///
/// The library is opened when the first page is read, not when margin starts (most commands
/// never read an image); each function is bound by its name in the C API, with the signature
/// `capi.h` gives it (the tests recognize real pages through every one of them). One engine is
/// kept per language set and thread that used it: loading a language's data takes longer than
/// reading a page.
public struct TesseractRecognizer: TextRecognizer {
    public init() {}

    public var engine: String {
        get throws { "tesseract " + (try CAPI.shared().version) }
    }

    public func check(languages: String) throws {
        // The engine made to check is kept for the first page read.
        let api = try CAPI.shared()
        api.give(try api.engine(languages: languages), languages: languages)
    }

    public func recognize(_ image: GrayImage, languages: String) throws -> [RecognizedWord] {
        guard image.width > 0, image.height > 0, image.pixels.count >= image.width * image.height else {
            throw OCRError.failed("an empty image")
        }
        let api = try CAPI.shared()
        let handle = try api.engine(languages: languages)
        defer { api.give(handle, languages: languages) }
        return try api.read(handle, image)
    }
}

/// Installs what Debian calls the data of a language (`tesseract-ocr-deu`).
func package(of language: String) -> String {
    "tesseract-ocr-" + language.lowercased().replacingOccurrences(of: "_", with: "-")
}

/// The bound functions of libtesseract's C API.
private final class CAPI: @unchecked Sendable {
    typealias Handle = OpaquePointer
    private let create: @convention(c) () -> Handle?
    private let delete: @convention(c) (Handle) -> Void
    private let initialize: @convention(c) (Handle, UnsafePointer<CChar>?, UnsafePointer<CChar>) -> Int32
    private let setPageSegMode: @convention(c) (Handle, Int32) -> Void
    private let setVariable: @convention(c) (Handle, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    private let setImage: @convention(c) (Handle, UnsafePointer<UInt8>, Int32, Int32, Int32, Int32) -> Void
    private let setResolution: @convention(c) (Handle, Int32) -> Void
    private let recognize: @convention(c) (Handle, OpaquePointer?) -> Int32
    private let clear: @convention(c) (Handle) -> Void
    private let iterator: @convention(c) (Handle) -> OpaquePointer?
    private let iteratorDelete: @convention(c) (OpaquePointer) -> Void
    private let pageIterator: @convention(c) (OpaquePointer) -> OpaquePointer?
    private let next: @convention(c) (OpaquePointer, Int32) -> Int32
    private let text: @convention(c) (OpaquePointer, Int32) -> UnsafeMutablePointer<CChar>?
    private let confidence: @convention(c) (OpaquePointer, Int32) -> Float
    private let box:
        @convention(c) (
            OpaquePointer, Int32, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>,
            UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>
        ) -> Int32
    private let isAtBeginning: @convention(c) (OpaquePointer, Int32) -> Int32
    private let deleteText: @convention(c) (UnsafePointer<CChar>) -> Void
    let version: String

    /// Page iterator levels (`TessPageIteratorLevel`).
    private static let block: Int32 = 0, paragraph: Int32 = 1, line: Int32 = 2, word: Int32 = 3
    /// `PSM_AUTO`: page segmentation without orientation detection, as the CLI's default.
    private static let automatic: Int32 = 3

    private let lock = NSLock()
    private var idle = [String: [Handle]]()

    private static let loaded: Result<CAPI, OCRError> = {
        // Tesseract's own threads make two pages read side by side slower, not faster: margin
        // reads one page a core.
        setenv("OMP_THREAD_LIMIT", "1", 0)
        for name in ["libtesseract.so.5", "libtesseract.so"] {
            if let library = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                do {
                    return .success(try CAPI(library))
                } catch let error as OCRError {
                    return .failure(error)
                } catch {
                    return .failure(.engineMissing("\(error)"))
                }
            }
        }
        return .failure(
            .engineMissing(
                "Tesseract 5 is not installed (libtesseract.so.5): install the Debian package libtesseract5 "
                    + "and tesseract-ocr-eng to read scanned pages"))
    }()

    static func shared() throws -> CAPI { try loaded.get() }

    private init(_ library: UnsafeMutableRawPointer) throws {
        func bind<T>(_ name: String, as type: T.Type) throws -> T {
            guard let symbol = dlsym(library, name) else {
                throw OCRError.engineMissing("the Tesseract library has no \(name): Tesseract 5 is needed")
            }
            return unsafeBitCast(symbol, to: type)
        }
        let version = try bind("TessVersion", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
        self.version = version().map { String(cString: $0) } ?? "?"
        guard self.version.hasPrefix("5.") else {
            throw OCRError.engineMissing("Tesseract \(self.version) is installed; margin reads with Tesseract 5")
        }
        create = try bind("TessBaseAPICreate", as: (@convention(c) () -> Handle?).self)
        delete = try bind("TessBaseAPIDelete", as: (@convention(c) (Handle) -> Void).self)
        initialize = try bind(
            "TessBaseAPIInit3", as: (@convention(c) (Handle, UnsafePointer<CChar>?, UnsafePointer<CChar>) -> Int32).self
        )
        setPageSegMode = try bind("TessBaseAPISetPageSegMode", as: (@convention(c) (Handle, Int32) -> Void).self)
        setVariable = try bind(
            "TessBaseAPISetVariable",
            as: (@convention(c) (Handle, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32).self)
        setImage = try bind(
            "TessBaseAPISetImage",
            as: (@convention(c) (Handle, UnsafePointer<UInt8>, Int32, Int32, Int32, Int32) -> Void).self)
        setResolution = try bind("TessBaseAPISetSourceResolution", as: (@convention(c) (Handle, Int32) -> Void).self)
        recognize = try bind("TessBaseAPIRecognize", as: (@convention(c) (Handle, OpaquePointer?) -> Int32).self)
        clear = try bind("TessBaseAPIClear", as: (@convention(c) (Handle) -> Void).self)
        iterator = try bind("TessBaseAPIGetIterator", as: (@convention(c) (Handle) -> OpaquePointer?).self)
        iteratorDelete = try bind("TessResultIteratorDelete", as: (@convention(c) (OpaquePointer) -> Void).self)
        pageIterator = try bind(
            "TessResultIteratorGetPageIterator", as: (@convention(c) (OpaquePointer) -> OpaquePointer?).self)
        next = try bind("TessResultIteratorNext", as: (@convention(c) (OpaquePointer, Int32) -> Int32).self)
        text = try bind(
            "TessResultIteratorGetUTF8Text",
            as: (@convention(c) (OpaquePointer, Int32) -> UnsafeMutablePointer<CChar>?).self)
        confidence = try bind(
            "TessResultIteratorConfidence", as: (@convention(c) (OpaquePointer, Int32) -> Float).self)
        box = try bind(
            "TessPageIteratorBoundingBox",
            as: (@convention(c) (
                OpaquePointer, Int32, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>,
                UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>
            ) -> Int32).self)
        isAtBeginning = try bind(
            "TessPageIteratorIsAtBeginningOf", as: (@convention(c) (OpaquePointer, Int32) -> Int32).self)
        deleteText = try bind("TessDeleteText", as: (@convention(c) (UnsafePointer<CChar>) -> Void).self)
    }

    /// An engine ready for `languages`, from those kept idle or made now.
    func engine(languages: String) throws -> Handle {
        if let kept = lock.withLock({ idle[languages]?.popLast() }) { return kept }
        let wanted = languages.split(separator: "+").map(String.init)
        guard !wanted.isEmpty, wanted.allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
            throw OCRError.languageMissing("'\(languages)' is not a list of Tesseract languages such as eng or eng+deu")
        }
        // Tesseract starts with the languages it finds and leaves out the others in silence.
        let missing = wanted.filter { !Self.hasData($0) }
        guard missing.isEmpty else {
            throw OCRError.languageMissing(
                "no Tesseract data for \(missing.joined(separator: ", ")): install the Debian package "
                    + missing.map(package(of:)).joined(separator: " "))
        }
        guard let handle = create() else { throw OCRError.failed("Tesseract could not start") }
        // Tesseract's messages (a missing language, its caches at exit) would go to stderr,
        // which is margin's; what went wrong is said by margin's own error instead.
        _ = setVariable(handle, "debug_file", "/dev/null")
        guard initialize(handle, nil, languages) == 0 else {
            delete(handle)
            let missing = wanted.filter { !Self.hasData($0) }
            throw OCRError.languageMissing(
                missing.isEmpty
                    ? "Tesseract could not load the language data for \(languages)"
                    : "no Tesseract data for \(missing.joined(separator: ", ")): install the Debian package "
                        + missing.map(package(of:)).joined(separator: " "))
        }
        setPageSegMode(handle, Self.automatic)
        // Spaces between words are kept as spaces, not guessed from the layout of a table.
        _ = setVariable(handle, "preserve_interword_spaces", "0")
        return handle
    }

    func give(_ handle: Handle, languages: String) {
        lock.withLock { idle[languages, default: []].append(handle) }
    }

    /// Whether the data of `language` is where Tesseract looks for it.
    private static func hasData(_ language: String) -> Bool {
        var folders = ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tessdata", "/usr/local/share/tessdata"]
        if let prefix = ProcessInfo.processInfo.environment["TESSDATA_PREFIX"] {
            folders.insert(prefix, at: 0)
            folders.insert(prefix + "/tessdata", at: 1)
        }
        return folders.contains { FileManager.default.fileExists(atPath: "\($0)/\(language).traineddata") }
    }

    func read(_ handle: Handle, _ image: GrayImage) throws -> [RecognizedWord] {
        defer { clear(handle) }
        image.pixels.withUnsafeBufferPointer { pixels in
            setImage(handle, pixels.baseAddress!, Int32(image.width), Int32(image.height), 1, Int32(image.width))
        }
        setResolution(handle, Int32(image.dpi.rounded()))
        guard recognize(handle, nil) == 0 else { throw OCRError.failed("Tesseract could not read the page") }
        guard let results = iterator(handle) else { return [] }
        defer { iteratorDelete(results) }
        guard let page = pageIterator(results) else { return [] }
        var words = [RecognizedWord]()
        var block = -1, paragraph = -1, line = -1
        repeat {
            if isAtBeginning(page, Self.block) != 0 { block += 1 }
            if isAtBeginning(page, Self.paragraph) != 0 { paragraph += 1 }
            if isAtBeginning(page, Self.line) != 0 { line += 1 }
            guard let pointer = text(results, Self.word) else { continue }
            let word = String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
            deleteText(pointer)
            var left: Int32 = 0, top: Int32 = 0, right: Int32 = 0, bottom: Int32 = 0
            guard !word.isEmpty, box(page, Self.word, &left, &top, &right, &bottom) != 0 else { continue }
            words.append(
                RecognizedWord(
                    text: word, left: Int(left), top: Int(top), right: Int(right), bottom: Int(bottom),
                    confidence: Double(confidence(results, Self.word)), block: max(block, 0),
                    paragraph: max(paragraph, 0), line: max(line, 0)))
        } while next(results, Self.word) != 0
        return words
    }
}
