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

    /// Recognizes `page`: its words in PDF user space. Nil for a page with no room for text.
    static func read(_ page: any PDFPage, languages: String, recognizer: any TextRecognizer, engine: String) throws
        -> OCRPage?
    {
        let size = page.size
        guard let dpi = resolution(for: size) else { return nil }
        let image = try page.renderGray(dpi: dpi)
        let words = try recognizer.recognize(image, languages: languages)
        let scale = 72 / dpi
        let placed = words.map { word in
            OCRWord(
                text: word.text,
                box: PDFRect(
                    x0: Double(word.left) * scale, y0: size.height - Double(word.bottom) * scale,
                    x1: Double(word.right) * scale, y1: size.height - Double(word.top) * scale),
                confidence: word.confidence, paragraph: word.paragraph, line: word.line)
        }
        return OCRPage(sha256: "", page: page.number, words: placed, engine: engine, languages: languages, dpi: dpi)
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
