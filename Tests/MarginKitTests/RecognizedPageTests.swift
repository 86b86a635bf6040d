import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

@testable import MarginKit

/// A page whose text OCR read answers as the page's own text would: its text, boxes, lines,
/// matches and crops come from the words read; drawing it is the PDF's.
@Suite struct RecognizedPageTests {
    init() { PDFEngines.install(PopplerEngine()) }

    func page() throws -> RecognizedPage {
        let base = try PopplerEngine().open(path: Fixtures.pdf("sample.pdf")).page(1)
        func word(_ text: String, _ x0: Double, _ x1: Double, line: Int, paragraph: Int = 0) -> OCRWord {
            let top = 700.0 - Double(line) * 20
            return OCRWord(
                text: text, box: PDFRect(x0: x0, y0: top - 10, x1: x1, y1: top), confidence: 90, paragraph: paragraph,
                line: line)
        }
        let words = [
            word("The", 72, 90, line: 0), word("quick", 94, 124, line: 0), word("brown", 128, 160, line: 0),
            word("fox", 72, 90, line: 1), word("jumps", 94, 124, line: 1), word("Next", 72, 96, line: 2, paragraph: 1),
        ]
        return RecognizedPage(
            base, recognized: OCRPage(sha256: "", page: 1, words: words, engine: "test", languages: "eng", dpi: 300))
    }

    @Test func itsTextIsTheWordsRead() throws {
        let page = try page()
        #expect(page.text == "The quick brown\nfox jumps\n\nNext")
        #expect(page.textSource == .ocr)
        #expect(page.readingText().boxes?.count == page.text.unicodeScalars.count)
        #expect(page.textLines().map(\.text) == ["The quick brown", "fox jumps", "Next"])
    }

    @Test func matchesAreOneRectangleALine() throws {
        let page = try page()
        let matches = page.find("BROWN fox")
        #expect(matches.count == 1)
        let rects = try #require(matches.first?.rects)
        #expect(rects.count == 2)
        #expect(abs(rects[0].x0 - 128) < 0.01 && abs(rects[0].x1 - 160) < 0.01)
        #expect(abs(rects[1].x0 - 72) < 0.01 && abs(rects[1].x1 - 90) < 0.01)
        #expect(page.find("zebra").isEmpty)
        #expect(page.find("brown", caseSensitive: true).count == 1)
        #expect(page.find("Brown", caseSensitive: true).isEmpty)
    }

    @Test func aCropReadsTheWordsInside() throws {
        let page = try page()
        #expect(page.text(in: PDFRect(x0: 90, y0: 685, x1: 165, y1: 705)) == "quick brown")
        #expect(page.text(in: [PDFRect(x0: 70, y0: 662, x1: 130, y1: 705)]) == "The quick fox jumps")
    }
}
