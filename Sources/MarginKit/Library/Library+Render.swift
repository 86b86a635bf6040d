import Foundation
import MarginCore

/// What `render` should make.
public struct RenderRequest: Sendable {
    public var page: Int
    public var format: RenderFormat = .png
    /// Dots per inch for PNG (ignored when `width` or `height` is given).
    public var dpi: Double = 150
    /// Fit the image into this many pixels wide and/or high, keeping the aspect ratio.
    public var width: Int?
    public var height: Int?
    /// Draw the book's highlights and bookmarks on the page.
    public var annotations = false

    public init(page: Int) {
        self.page = page
    }

    /// The largest DPI rendered; more is capped (and said).
    public static let maxDPI: Double = 1200
    /// The least resolution a page is drawn at (below it a page is a pixel or two, and cairo
    /// refuses the surface).
    public static let minDPI: Double = 1
    /// The largest side of a PNG, in pixels.
    public static let maxPixels = 10000
}

/// What `render` made.
public struct RenderResult: Sendable, Encodable {
    public var file: String
    public var page: Int
    public var format: String
    public var dpi: Double
    public var width: Int
    public var height: Int
    /// Things the user should know (a capped DPI).
    public var notes: [String]
}

extension Library {
    /// The default output name: `<title-slug>-p<N>.<format>`.
    public func defaultRenderName(_ book: Book, _ request: RenderRequest) -> String {
        "\(slug(book.title))-p\(request.page).\(request.format.rawValue)"
    }

    /// Renders one page to `output` (written atomically; an existing file needs `force`).
    /// Only that page is loaded, however long the book.
    public func render(_ book: Book, _ request: RenderRequest, to output: String, force: Bool) async throws
        -> RenderResult
    {
        guard request.page >= 1, request.page <= book.pages else {
            throw MarginError.pageOutOfRange(page: request.page, count: book.pages)
        }
        let path = try cachedFile(book)
        let overlays = request.annotations ? try await overlays(for: book, page: request.page) : []
        let result: RenderResult
        do {
            result = try documents.withDocument(path: path, password: try password(of: book)) { document in
                try render(try document.page(request.page), request, overlays: overlays, to: output, force: force)
            }
        } catch let error as PDFError {
            throw pdfError(error, of: book)
        }
        try await touch(book)
        return result
    }

    private func render(
        _ page: any PDFPage, _ request: RenderRequest, overlays: [Overlay], to output: String, force: Bool
    )
        throws -> RenderResult
    {
        var notes = [String]()
        var dpi = request.dpi
        let (pointsWide, pointsHigh) = page.size
        if request.width != nil || request.height != nil {
            let scales = [
                request.width.map { Double($0) / pointsWide }, request.height.map { Double($0) / pointsHigh },
            ]
            dpi = (scales.compactMap { $0 }.min() ?? 1) * 72
        }
        if dpi > RenderRequest.maxDPI {
            notes.append("capped the resolution at \(Int(RenderRequest.maxDPI)) dpi (asked for \(Int(dpi)))")
            dpi = RenderRequest.maxDPI
        }
        let largest = max(pointsWide, pointsHigh) * dpi / 72
        if request.format == .png, largest > Double(RenderRequest.maxPixels) {
            let capped = Double(RenderRequest.maxPixels) * 72 / max(pointsWide, pointsHigh)
            notes.append(
                "capped the resolution at \(Int(capped)) dpi to stay within \(RenderRequest.maxPixels) pixels a side")
            dpi = capped
        }
        let check: FileCheck
        switch request.format {
        case .png: check = .png
        case .svg: check = .svg
        case .pdf: check = .pdf(pages: 1)
        }
        let written = try writeAtomically(to: output, force: force, check: check) { temporary in
            try PopplerWatchdog.limit("render page \(request.page)", configuration: configuration) {
                try page.render(to: temporary, format: request.format, dpi: dpi, overlays: overlays)
            }
        }
        let pixels: (width: Int, height: Int) =
            request.format == .png
            ? page.pixelSize(dpi: dpi) : (Int(pointsWide.rounded(.up)), Int(pointsHigh.rounded(.up)))
        return RenderResult(
            file: written, page: request.page, format: request.format.rawValue, dpi: dpi, width: pixels.width,
            height: pixels.height, notes: notes)
    }
}
