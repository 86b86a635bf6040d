internal import CPoppler
import MarginCore

/// One page of a `Document`. Keeps its document alive.
public final class Page {
    let pointer: OpaquePointer
    /// 1-based page number.
    public let number: Int
    let document: Document

    init(pointer: OpaquePointer, number: Int, document: Document) {
        self.pointer = pointer
        self.number = number
        self.document = document
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    var page: OpaquePointer { pointer }

    /// Width and height in PDF points.
    public var size: (width: Double, height: Double) {
        var width = 0.0
        var height = 0.0
        poppler_page_get_size(page, &width, &height)
        return (width, height)
    }

    /// The page's text in reading order, as poppler extracts it; empty for a page without text.
    public var text: String {
        takeString(poppler_page_get_text(page)) ?? ""
    }
}
