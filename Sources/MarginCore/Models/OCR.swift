import Foundation

/// A word recognition read on a page, placed in PDF user space (points, origin at the bottom
/// left, as `PDFRect`), with its confidence (0 to 100) and its place in the text.
public struct OCRWord: Codable, Sendable, Equatable {
    public var text: String
    public var box: PDFRect
    public var confidence: Double
    public var paragraph: Int
    public var line: Int

    public init(text: String, box: PDFRect, confidence: Double, paragraph: Int, line: Int) {
        self.text = text
        self.box = box
        self.confidence = confidence
        self.paragraph = paragraph
        self.line = line
    }
}

/// What recognition read on one page of one PDF, kept by the PDF's SHA-256 and the page: a
/// re-add, a `reindex` or a `db copy` finds it there and reads nothing again. The user's PDF is
/// never changed.
public struct OCRPage: Model, Equatable {
    public static let entity = "ocr_page"
    public static let naturalKey = ["sha256", "page"]

    public var id: Int64?
    public var uuid: UUID
    public var sha256: String
    /// 1-based.
    public var page: Int
    /// The words, as JSON (`OCRWord`s in reading order).
    public var words: String
    /// The mean confidence of the words (0 to 100; 0 for a page without words).
    public var confidence: Double
    /// The engine and its version ("tesseract 5.3.0").
    public var engine: String
    /// The languages read ("eng+deu").
    public var languages: String
    /// The resolution the page was drawn at for recognition.
    public var dpi: Double
    /// The SHA-256 of the page as drawn for recognition (its gray pixels and size): a page
    /// drawn the same in another file (a book's new version) is what was read here, and what
    /// was read is used again; nil for a page not drawn (a blank one, glanced at).
    public var image: String?
    public var createdAt: Date

    /// The engine a child names for a page whose image was read before (`image`): the caller
    /// has its words.
    public static let sameImage = "same image"

    public init(
        sha256: String, page: Int, words: [OCRWord], engine: String, languages: String, dpi: Double,
        image: String? = nil, now: Date = Date()
    ) {
        self.uuid = UUID()
        self.sha256 = sha256
        self.page = page
        self.words = String(decoding: (try? JSONEncoder().encode(words)) ?? Data("[]".utf8), as: UTF8.self)
        self.confidence = words.isEmpty ? 0 : words.map(\.confidence).reduce(0, +) / Double(words.count)
        self.engine = engine
        self.languages = languages
        self.dpi = dpi
        self.image = image
        self.createdAt = now
    }

    /// The words read (none when the stored JSON is not theirs).
    public var recognized: [OCRWord] {
        (try? JSONDecoder().decode([OCRWord].self, from: Data(words.utf8))) ?? []
    }

    /// The page's text as a reader reads it: words of a line joined by spaces, lines by line
    /// breaks, paragraphs by a blank line; each scalar with its box (a word's box shared out
    /// among its letters; none for the spaces and breaks put between words).
    public var readingText: ReadingText { OCRPage.readingText(of: recognized) }

    public static func readingText(of words: [OCRWord]) -> ReadingText {
        var text = String.UnicodeScalarView()
        var boxes = [PDFRect]()
        var last: OCRWord?
        for word in words {
            if let last {
                let gap: String = word.paragraph != last.paragraph ? "\n\n" : word.line != last.line ? "\n" : " "
                for scalar in gap.unicodeScalars {
                    text.append(scalar)
                    boxes.append(PDFRect(x0: last.box.x1, y0: last.box.y0, x1: last.box.x1, y1: last.box.y0))
                }
            }
            let scalars = Array(word.text.unicodeScalars)
            let width = (word.box.x1 - word.box.x0) / Double(max(scalars.count, 1))
            for (index, scalar) in scalars.enumerated() {
                text.append(scalar)
                let x0 = word.box.x0 + Double(index) * width
                boxes.append(PDFRect(x0: x0, y0: word.box.y0, x1: x0 + width, y1: word.box.y1))
            }
            last = word
        }
        return ReadingText(text: String(text), boxes: boxes, source: .ocr)
    }

    /// The page's lines as `PDFPageText.textLines` gives them (top-left origin), for telling a
    /// title apart: a line's type size is taken as the height of its words' boxes (the median).
    public func textLines(pageHeight: Double) -> [TextLine] {
        var lines = [TextLine]()
        var current = [OCRWord]()
        func close() {
            guard let first = current.first else { return }
            let heights = current.map { $0.box.y1 - $0.box.y0 }.sorted()
            lines.append(
                TextLine(
                    text: current.map(\.text).joined(separator: " "), fontSize: heights[heights.count / 2],
                    top: pageHeight - (current.map(\.box.y1).max() ?? first.box.y1),
                    bottom: pageHeight - (current.map(\.box.y0).min() ?? first.box.y0),
                    left: current.map(\.box.x0).min() ?? first.box.x0))
            current = []
        }
        for word in recognized {
            if let last = current.last, last.line != word.line || last.paragraph != word.paragraph { close() }
            current.append(word)
        }
        close()
        return lines
    }

    public enum Fields {
        public static let sha256 = Field<OCRPage, String>("sha256")
        public static let page = Field<OCRPage, Int>("page")
        public static let image = Field<OCRPage, String?>("image")
    }
}

/// When a page's own text can be read: it holds a letter, and at most half of what is not
/// white space is U+FFFD, a private-use or a control character (glyphs without a Unicode
/// mapping: what a PDF gives for text set in a font it didn't say how to read). A page failing
/// this is recognized from its image (`--ocr auto`).
public enum TextLayer {
    public static func isUsable(_ text: String) -> Bool {
        var letters = 0
        var visible = 0
        var unmapped = 0
        for scalar in text.unicodeScalars {
            // ASCII (most of every page) told apart without Unicode's tables.
            if scalar.isASCII {
                let value = scalar.value
                switch value {
                case 0x09...0x0D, 0x20: continue
                case 0x41...0x5A, 0x61...0x7A: letters += 1
                case 0x00...0x1F, 0x7F: unmapped += 1
                default: break
                }
                visible += 1
                continue
            }
            guard !scalar.properties.isWhitespace else { continue }
            visible += 1
            switch scalar.properties.generalCategory {
            case .privateUse, .control, .format, .surrogate, .unassigned: unmapped += 1
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: letters += 1
            default: if scalar == "\u{FFFD}" { unmapped += 1 }
            }
        }
        return letters > 0 && unmapped * 2 <= visible
    }
}
