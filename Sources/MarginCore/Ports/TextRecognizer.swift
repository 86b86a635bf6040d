import Foundation

/// A page drawn for recognition: 8-bit gray pixels, rows top to bottom, at `dpi`.
public struct GrayImage: Sendable {
    public var width: Int
    public var height: Int
    /// `width * height` bytes, 0 black to 255 white.
    public var pixels: [UInt8]
    public var dpi: Double

    public init(width: Int, height: Int, pixels: [UInt8], dpi: Double) {
        self.width = width
        self.height = height
        self.pixels = pixels
        self.dpi = dpi
    }
}

/// A word the recognizer read in an image: its box in pixels (top-left origin), its confidence
/// (0 to 100) and where it stands in the text (block, paragraph and line, numbered from 0 in
/// reading order).
public struct RecognizedWord: Sendable, Equatable {
    public var text: String
    public var left: Int, top: Int, right: Int, bottom: Int
    public var confidence: Double
    public var block: Int, paragraph: Int, line: Int

    public init(
        text: String, left: Int, top: Int, right: Int, bottom: Int, confidence: Double, block: Int, paragraph: Int,
        line: Int
    ) {
        self.text = text
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
        self.confidence = confidence
        self.block = block
        self.paragraph = paragraph
        self.line = line
    }
}

/// Reads the words of a page's image (optical character recognition). Its adapter (the
/// `Tesseract` target) is installed by the executables (`TextRecognizers.install`); without one
/// a scanned page stays without text.
public protocol TextRecognizer: Sendable {
    /// The engine and its version ("tesseract 5.3.0"), for the provenance of what it read.
    var engine: String { get throws }
    /// Checks that the engine and the data for `languages` ("eng+deu") are installed; throws
    /// `OCRError` naming what to install.
    func check(languages: String) throws
    /// The words of `image`, in reading order.
    func recognize(_ image: GrayImage, languages: String) throws -> [RecognizedWord]
}

/// What keeps a page from being recognized.
public enum OCRError: Error, LocalizedError, Equatable, Sendable {
    /// No recognizer in this program, or its library isn't installed.
    case engineMissing(String)
    /// The language data isn't installed: the message names the Debian package.
    case languageMissing(String)
    /// The recognizer failed on a page.
    case failed(String)

    public var errorDescription: String? {
        switch self {
        case .engineMissing(let message), .languageMissing(let message), .failed(let message): message
        }
    }
}

/// The recognizer the process installed, if any.
public enum TextRecognizers {
    private static let installed = Installed<any TextRecognizer>()

    public static func install(_ recognizer: any TextRecognizer) { installed.install(recognizer) }

    public static var current: (any TextRecognizer)? { installed.value }
}
