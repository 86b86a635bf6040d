internal import CPoppler
import MarginCore

/// poppler-glib as the process's PDF engine: `PDFEngines.install(PopplerEngine())` in `main`.
public struct PopplerEngine: PDFEngine {
    public init() {}

    public func open(path: String, password: String?) throws -> any PDFDocument {
        try Document(path: path, password: password)
    }

    public func map(path: String, limit: Int) -> (any MappedPDFFile)? {
        MappedPDF(path: path, limit: limit)
    }

    public func open(mapped: any MappedPDFFile) throws -> any PDFDocument {
        guard let mapped = mapped as? MappedPDF else {
            throw PDFError.unreadable("a file mapped by another engine")
        }
        return try Document(mapped: mapped)
    }

    public func loadNow() { try? loadPoppler() }
}

/// The errors poppler's documents throw are the port's.
public typealias PopplerError = PDFError

extension Document: PDFDocument {
    public func page(_ number: Int) throws -> any PDFPage { try loadPage(number) }
}

extension Page: PDFPageText, PDFPageRendering, PDFPageMarkup {}
