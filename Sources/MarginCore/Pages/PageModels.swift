import Foundation

/// A rectangle in PDF user space: points, origin at the bottom left of the page.
public struct PDFRect: Sendable, Equatable, Codable {
    public var x0: Double, y0: Double, x1: Double, y1: Double

    public init(x0: Double, y0: Double, x1: Double, y1: Double) {
        self.x0 = min(x0, x1)
        self.y0 = min(y0, y1)
        self.x1 = max(x0, x1)
        self.y1 = max(y0, y1)
    }

    /// `[x0, y0, x1, y1]`.
    public var array: [Double] { [x0, y0, x1, y1] }
}

/// One occurrence of a text on a page: one rectangle per line it spans.
public struct TextMatch: Sendable, Equatable {
    public var rects: [PDFRect]

    public init(rects: [PDFRect]) { self.rects = rects }
}

/// A page's text as a reader reads it, with the box of each of its scalars.
public struct ReadingText: Sendable {
    public var text: String
    /// One box per Unicode scalar of `text` (zero-size for inserted spaces and line breaks);
    /// nil when the engine gave no usable layout.
    public var boxes: [PDFRect]?
    /// Where the text came from.
    public var source: PageTextSource

    public init(text: String, boxes: [PDFRect]?, source: PageTextSource = .textLayer) {
        self.text = text
        self.boxes = boxes
        self.source = source
    }
}

/// Where a page's text comes from: the PDF's own text layer, or recognition of its image.
public enum PageTextSource: String, Sendable, Equatable, Codable {
    case textLayer = "text"
    case ocr
}

/// One line of a page's text as the engine lays it out, with the size of its largest font.
public struct TextLine: Sendable, Equatable, Codable {
    public var text: String
    /// Points: the largest font size of the line's characters.
    public var fontSize: Double
    /// The line's box, PDF points, top-left origin (y grows down the page).
    public var top: Double
    public var bottom: Double
    public var left: Double
    /// The line's text cut where a wide space (more than one and a half times the type size)
    /// parts it: names set side by side in columns; nil when nothing parts it.
    public var pieces: [String]?

    public init(text: String, fontSize: Double, top: Double, bottom: Double, left: Double, pieces: [String]? = nil) {
        self.pieces = pieces
        self.text = text
        self.fontSize = fontSize
        self.top = top
        self.bottom = bottom
        self.left = left
    }
}

/// An RGB colour, components 0...1.
public struct RGB: Sendable, Equatable, Codable {
    public var red: Double, green: Double, blue: Double

    public init(red: Double, green: Double, blue: Double) {
        self.red = red
        self.green = green
        self.blue = blue
    }
}

/// An annotation read from a PDF page.
public struct PageAnnotation: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case highlight, underline, strikeOut, squiggly, text, freeText, other
    }

    public var kind: Kind
    /// Its position in the page's annotation list (stable for an unchanged file).
    public var index: Int
    /// The annotation's rectangle.
    public var rect: PDFRect
    /// For text markup: the bounding rectangle of each quadrilateral (one per line).
    public var quads: [PDFRect]
    public var contents: String?
    /// The markup's label: by convention its author.
    public var author: String?
    /// /M, as the PDF wrote it (e.g. "D:20240102120000Z").
    public var modified: String?
    /// The markup's creation date (day precision), if present.
    public var created: DateComponents?
    public var color: RGB?
    /// /NM, the annotation's name, when it has one.
    public var name: String?

    public init(
        kind: Kind, index: Int, rect: PDFRect, quads: [PDFRect], contents: String?, author: String?,
        modified: String?, created: DateComponents?, color: RGB?, name: String?
    ) {
        self.kind = kind
        self.index = index
        self.rect = rect
        self.quads = quads
        self.contents = contents
        self.author = author
        self.modified = modified
        self.created = created
        self.color = color
        self.name = name
    }
}

/// An entry of a PDF's outline (the bookmarks panel of a viewer): its title, the page it goes
/// to and its depth.
public struct OutlineEntry: Sendable, Equatable, Encodable {
    public var title: String
    /// 1-based; nil when the entry leads nowhere in this document (a web link, a destination
    /// that doesn't exist).
    public var page: Int?
    /// 1 is the top level.
    public var level: Int
    /// It leads out of the document (a web address, another file, a viewer's command): no page
    /// is missing from it.
    public var leadsOut = false

    public init(title: String, page: Int?, level: Int, leadsOut: Bool = false) {
        self.title = title
        self.page = page
        self.level = level
        self.leadsOut = leadsOut
    }

    enum CodingKeys: String, CodingKey { case title, page, level }
}

/// Output formats for `PDFPageRendering.render`.
public enum RenderFormat: String, CaseIterable, Sendable {
    case png, svg, pdf
}

/// A rectangle drawn over a rendered page, in PDF points with the origin at the top left
/// (the engine's text coordinates).
public struct Overlay: Sendable, Equatable {
    public enum Style: Sendable, Equatable {
        /// A translucent fill, as a highlighter.
        case highlight
        /// A solid marker (a bookmark's ribbon).
        case marker
    }

    public var x0: Double, y0: Double, x1: Double, y1: Double
    /// RGB components, 0...1.
    public var red: Double, green: Double, blue: Double
    public var style: Style

    public init(
        x0: Double, y0: Double, x1: Double, y1: Double, red: Double, green: Double, blue: Double,
        style: Style = .highlight
    ) {
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
        self.red = red
        self.green = green
        self.blue = blue
        self.style = style
    }
}
