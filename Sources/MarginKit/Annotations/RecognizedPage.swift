import Foundation
import MarginCore

/// A page whose text was recognized from its image: its text, character boxes and lines are
/// the recognized words' (`OCRPage`), the rest (drawing it, its annotations) the PDF's page.
/// Everything that reads a page's text (highlights, the reader's text layer, exports) reads a
/// scanned page through this as it reads a born-digital one.
final class RecognizedPage: PDFPageText, PDFPageRendering, PDFPageMarkup {
    let base: any PDFPage
    private let reading: ReadingText
    private let recognized: OCRPage

    init(_ base: any PDFPage, recognized: OCRPage) {
        self.base = base
        self.recognized = recognized
        self.reading = recognized.readingText
    }

    var number: Int { base.number }
    var size: (width: Double, height: Double) { base.size }
    var label: String? { base.label }
    var text: String { reading.text }
    var textSource: PageTextSource { .ocr }
    func readingText() -> ReadingText { reading }
    func readingTextOnly() -> String { reading.text }
    func characterBoxes() -> [PDFRect]? { reading.boxes }
    func textLines() -> [TextLine] { recognized.textLines(pageHeight: size.height) }

    /// Found as `highlight add` finds text (folded, across line ends), placed with the words'
    /// boxes, a rectangle a line.
    func find(_ needle: String, caseSensitive: Bool) -> [TextMatch] {
        let locator = PageLocator(number: number, text: reading.text, page: self)
        return locator.occurrences(of: foldedTerm(needle), keepHyphens: needle.contains("-"))
            .filter { !caseSensitive || $0.text == needle.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .map { TextMatch(rects: $0.rects) }
    }

    func text(in rects: [PDFRect]) -> String {
        guard let boxes = reading.boxes else { return "" }
        var result = String.UnicodeScalarView()
        var pending = false
        for (index, scalar) in reading.text.unicodeScalars.enumerated() where index < boxes.count {
            let box = boxes[index]
            let x = (box.x0 + box.x1) / 2, y = (box.y0 + box.y1) / 2
            let inside = box.x1 > box.x0 && rects.contains { x >= $0.x0 && x <= $0.x1 && y >= $0.y0 && y <= $0.y1 }
            if inside {
                if pending && !result.isEmpty { result.append(" ") }
                result.append(scalar)
                pending = false
            } else if !result.isEmpty {
                pending = true
            }
        }
        return String(result)
    }

    func pixelSize(dpi: Double) -> (width: Int, height: Int) { base.pixelSize(dpi: dpi) }
    func render(to path: String, format: RenderFormat, dpi: Double, overlays: [Overlay]) throws {
        try base.render(to: path, format: format, dpi: dpi, overlays: overlays)
    }
    func renderPNG(dpi: Double, overlays: [Overlay]) throws -> Data { try base.renderPNG(dpi: dpi, overlays: overlays) }
    func renderGray(dpi: Double) throws -> GrayImage { try base.renderGray(dpi: dpi) }
    var annotations: [PageAnnotation] { base.annotations }
    func addHighlight(_ rects: [PDFRect], color: RGB, contents: String?, author: String?) {
        base.addHighlight(rects, color: color, contents: contents, author: author)
    }
    func addNote(at point: (x: Double, y: Double), contents: String, color: RGB, author: String?) {
        base.addNote(at: point, contents: contents, color: color, author: author)
    }
}

extension Library {
    /// What recognition read on the pages of `book`'s PDF (on `page` only, when given), by page.
    func recognized(_ book: Book, page: Int? = nil) async throws -> [Int: OCRPage] {
        guard book.ocrPages > 0 else { return [:] }
        var query = Query<OCRPage>().filter(OCRPage.Fields.sha256 == book.sha256)
        if let page { query = query.filter(OCRPage.Fields.page == page) }
        let pages = try await repository.read { [query] store in try store.fetch(query) }
        return Dictionary(pages.map { ($0.page, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The page as its text is read: recognized when recognition read it, else the PDF's own.
func readable(_ page: any PDFPage, _ recognized: [Int: OCRPage]) -> any PDFPage {
    guard let words = recognized[page.number], words.confidence > 0 else { return page }
    return RecognizedPage(page, recognized: words)
}
