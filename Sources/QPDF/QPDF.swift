import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What went wrong in qpdf: its own words.
public struct QPDFError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// A PDF's structure changed through qpdf's C API (libqpdf, loaded when first needed: the
/// commands that never write a PDF don't map it): what poppler-glib can't write, an outline
/// and document-level objects. Reads a file, changes it in memory, writes a new file; the input
/// is never modified, and an encrypted input is written encrypted as it was.
public final class QPDFDocument {
    private let api: API
    private var handle: OpaquePointer?

    /// Opens `path` (with the password that opens it, if encrypted).
    public init(path: String, password: String?) throws {
        api = try API.shared()
        handle = api.initialize()
        api.silenceErrors(handle)
        api.suppressWarnings(handle, 1)
        api.read(handle, path, password)
        try check("read \(path)")
    }

    deinit {
        if handle != nil { api.cleanup(&handle) }
    }

    /// The 0-based pages' count.
    public var pageCount: Int { Int(api.pageCount(handle)) }

    /// Appends to the document's outline (kept as it is) a top-level entry `title` whose
    /// children go to the given 1-based pages, open.
    public func appendOutline(title: String, children: [(title: String, page: Int)]) throws {
        let root = api.root(handle)
        var outlines = api.key(handle, root, "/Outlines")
        if api.isDictionary(handle, outlines) == 0 {
            outlines = indirect(dictionary(["/Type": api.name(handle, "/Outlines")]))
            api.replaceKey(handle, root, "/Outlines", outlines)
        }
        let parent = indirect(dictionary(["/Title": text(title), "/Parent": outlines]))
        var items = [UInt32]()
        for child in children {
            let page = api.page(handle, max(0, min(pageCount - 1, child.page - 1)))
            let destination = api.newArray(handle)
            api.append(handle, destination, page)
            api.append(handle, destination, api.name(handle, "/Fit"))
            items.append(
                indirect(dictionary(["/Title": text(child.title), "/Parent": parent, "/Dest": destination])))
        }
        for (index, item) in items.enumerated() {
            if index > 0 { api.replaceKey(handle, item, "/Prev", items[index - 1]) }
            if index + 1 < items.count { api.replaceKey(handle, item, "/Next", items[index + 1]) }
        }
        if let first = items.first, let last = items.last {
            // The entry itself goes where its first child goes.
            api.replaceKey(handle, parent, "/Dest", api.key(handle, first, "/Dest"))
            api.replaceKey(handle, parent, "/First", first)
            api.replaceKey(handle, parent, "/Last", last)
            api.replaceKey(handle, parent, "/Count", api.integer(handle, Int64(items.count)))
        }
        // After the document's own entries.
        let last = api.key(handle, outlines, "/Last")
        if api.isDictionary(handle, last) != 0 {
            api.replaceKey(handle, last, "/Next", parent)
            api.replaceKey(handle, parent, "/Prev", last)
        } else {
            api.replaceKey(handle, outlines, "/First", parent)
        }
        api.replaceKey(handle, outlines, "/Last", parent)
        let count = api.key(handle, outlines, "/Count")
        let before = api.isInteger(handle, count) != 0 ? abs(api.intValue(handle, count)) : 0
        api.replaceKey(handle, outlines, "/Count", api.integer(handle, before + 1 + Int64(items.count)))
        try check("add an outline")
    }

    /// Adds a note (a /Text annotation, closed) to a 1-based page at `rect` (PDF points,
    /// [x0, y0, x1, y1]), named `name` (/NM) so that it can be told apart when read back.
    public func addNote(
        page number: Int, rect: [Double], contents: String, author: String, name: String,
        color: (Double, Double, Double)
    ) throws {
        let page = api.page(handle, max(0, min(pageCount - 1, number - 1)))
        let box = api.newArray(handle)
        for value in rect { api.append(handle, box, api.real(handle, value, 2)) }
        let rgb = api.newArray(handle)
        for value in [color.0, color.1, color.2] { api.append(handle, rgb, api.real(handle, value, 3)) }
        let note = indirect(
            dictionary([
                "/Type": api.name(handle, "/Annot"), "/Subtype": api.name(handle, "/Text"), "/Rect": box,
                "/Contents": text(contents), "/T": text(author), "/NM": text(name), "/Name": api.name(handle, "/Note"),
                "/C": rgb, "/F": api.integer(handle, 4), "/P": page,
            ]))
        var annotations = api.key(handle, page, "/Annots")
        if api.isArray(handle, annotations) == 0 {
            annotations = api.newArray(handle)
            api.replaceKey(handle, page, "/Annots", annotations)
        }
        api.append(handle, annotations, note)
        try check("add a note")
    }

    /// The 1-based page each outline entry goes to, in reading order (parents before their
    /// children, as poppler walks it), at most `limit` entries and 32 levels deep; nil for an
    /// entry whose destination isn't a page of this document. Reads what poppler doesn't: a
    /// destination given as a dictionary (`<< /D [page …] >>`), directly or in a GoTo action.
    public func outlinePages(limit: Int = 20_000) -> [Int?] {
        var pages = [Int: Int]()
        for index in 0..<pageCount {
            pages[Int(api.objectID(handle, api.page(handle, index)))] = index + 1
        }
        var result = [Int?]()
        var seen = Set<Int32>()
        func walk(_ first: UInt32, depth: Int) {
            var item = first
            while api.isDictionary(handle, item) != 0, result.count < limit {
                let id = api.objectID(handle, item)
                guard seen.insert(id).inserted else { return }
                result.append(page(of: item, pages))
                let child = api.key(handle, item, "/First")
                if depth < 32, api.isDictionary(handle, child) != 0 { walk(child, depth: depth + 1) }
                item = api.key(handle, item, "/Next")
            }
        }
        let outlines = api.key(handle, api.root(handle), "/Outlines")
        if api.isDictionary(handle, outlines) != 0 { walk(api.key(handle, outlines, "/First"), depth: 1) }
        return result
    }

    private func page(of item: UInt32, _ pages: [Int: Int]) -> Int? {
        var destination = api.key(handle, item, "/Dest")
        if api.isNull(handle, destination) != 0 {
            let action = api.key(handle, item, "/A")
            guard api.isDictionary(handle, action) != 0 else { return nil }
            destination = api.key(handle, action, "/D")
        }
        if api.isDictionary(handle, destination) != 0 { destination = api.key(handle, destination, "/D") }
        guard api.isArray(handle, destination) != 0, api.arrayCount(handle, destination) > 0 else { return nil }
        let target = api.arrayItem(handle, destination, 0)
        if api.isInteger(handle, target) != 0 {
            let number = Int(api.intValue(handle, target)) + 1
            return (1...max(1, pageCount)).contains(number) ? number : nil
        }
        return pages[Int(api.objectID(handle, target))]
    }

    /// A word drawn invisibly (text render mode 3, as OCR tools write a scan's text layer): its
    /// text and box in the page's displayed space (points, origin at the bottom left of the page
    /// as shown, after its /CropBox and /Rotate).
    public struct InvisibleWord: Sendable {
        public var text: String
        public var box: [Double]

        public init(text: String, box: [Double]) {
            self.text = text
            self.box = box
        }
    }

    /// Adds a text layer to a 1-based page: each word invisible, in Courier (every glyph as wide
    /// as the next, so each letter lies over its share of the word's box), stretched to its box.
    /// Text readers (pdftotext, pdfgrep, a viewer's selection) then read the words there.
    public func addInvisibleText(page number: Int, words: [InvisibleWord]) throws {
        guard !words.isEmpty else { return }
        if !inheritedPushed {
            api.pushInherited(handle)
            inheritedPushed = true
        }
        let page = api.page(handle, max(0, min(pageCount - 1, number - 1)))
        var box = api.key(handle, page, "/CropBox")
        if api.isArray(handle, box) == 0 { box = api.key(handle, page, "/MediaBox") }
        var corners = [0.0, 0.0, 612, 792]
        if api.isArray(handle, box) != 0, api.arrayCount(handle, box) == 4 {
            corners = (0..<4).map { api.number(handle, api.arrayItem(handle, box, Int32($0))) }
        }
        let (x0, y0) = (min(corners[0], corners[2]), min(corners[1], corners[3]))
        let (width, height) = (abs(corners[2] - corners[0]), abs(corners[3] - corners[1]))
        let rotateObject = api.key(handle, page, "/Rotate")
        let rotate =
            api.isInteger(handle, rotateObject) != 0 ? ((Int(api.intValue(handle, rotateObject)) % 360) + 360) % 360 : 0
        // The page as shown → the page's own space: a point, and the directions of the shown
        // page's x and y axes.
        func place(_ x: Double, _ y: Double) -> (Double, Double) {
            switch rotate {
            case 90: return (x0 + width - y, y0 + x)
            case 180: return (x0 + width - x, y0 + height - y)
            case 270: return (x0 + y, y0 + height - x)
            default: return (x0 + x, y0 + y)
            }
        }
        let axes: (x: (Double, Double), y: (Double, Double)) =
            switch rotate {
            case 90: ((0, 1), (-1, 0))
            case 180: ((-1, 0), (0, -1))
            case 270: ((0, -1), (1, 0))
            default: ((1, 0), (0, 1))
            }
        var content = "Q\nq\nBT\n3 Tr\n/MarginOCR 1 Tf\n"
        for word in words where word.box.count == 4 {
            let encoded = Array(word.text.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : UInt8(ascii: "?") })
            let wide = max(word.box[2] - word.box[0], 0.1)
            let high = max(word.box[3] - word.box[1], 0.1)
            guard !encoded.isEmpty else { continue }
            let across = wide / (0.6 * Double(encoded.count))
            // The baseline a fifth of the way up the box: room for descenders below it.
            let (ox, oy) = place(word.box[0], word.box[1] + high * 0.2)
            let matrix = [
                axes.x.0 * across, axes.x.1 * across, axes.y.0 * high, axes.y.1 * high, ox, oy,
            ].map { String(format: "%.3f", $0) }.joined(separator: " ")
            content += "\(matrix) Tm <\(encoded.map { String(format: "%02X", $0) }.joined())> Tj\n"
        }
        content += "ET\nQ\n"
        // The page's own drawing in a saved graphics state, the text layer after it.
        let before = stream("q\n")
        let after = stream(content)
        let contents = api.key(handle, page, "/Contents")
        let list = api.newArray(handle)
        api.append(handle, list, before)
        if api.isArray(handle, contents) != 0 {
            for index in 0..<api.arrayCount(handle, contents) {
                api.append(handle, list, api.arrayItem(handle, contents, index))
            }
        } else if api.isNull(handle, contents) == 0 {
            api.append(handle, list, contents)
        }
        api.append(handle, list, after)
        api.replaceKey(handle, page, "/Contents", list)
        // Its font, in the page's resources.
        var resources = api.key(handle, page, "/Resources")
        if api.isDictionary(handle, resources) == 0 {
            resources = api.newDictionary(handle)
            api.replaceKey(handle, page, "/Resources", resources)
        }
        var fonts = api.key(handle, resources, "/Font")
        if api.isDictionary(handle, fonts) == 0 {
            fonts = api.newDictionary(handle)
            api.replaceKey(handle, resources, "/Font", fonts)
        }
        api.replaceKey(
            handle, fonts, "/MarginOCR",
            indirect(
                dictionary([
                    "/Type": api.name(handle, "/Font"), "/Subtype": api.name(handle, "/Type1"),
                    "/BaseFont": api.name(handle, "/Courier"), "/Encoding": api.name(handle, "/WinAnsiEncoding"),
                ])))
        try check("add a text layer to page \(number)")
    }

    private var inheritedPushed = false

    private func stream(_ text: String) -> UInt32 {
        let object = api.newStream(handle)
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer {
            api.replaceStreamData(handle, object, $0.baseAddress, $0.count, api.null(handle), api.null(handle))
        }
        return indirect(object)
    }

    /// Writes the document to `path`.
    public func write(to path: String) throws {
        api.initWrite(handle, path)
        try check("write \(path)")
        api.write(handle)
        try check("write \(path)")
    }

    // MARK: Objects

    private func dictionary(_ entries: [String: UInt32]) -> UInt32 {
        let object = api.newDictionary(handle)
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) { api.replaceKey(handle, object, key, value) }
        return object
    }

    private func indirect(_ object: UInt32) -> UInt32 { api.makeIndirect(handle, object) }

    private func text(_ value: String) -> UInt32 { api.unicode(handle, value) }

    private func check(_ doing: String) throws {
        guard api.hasError(handle) != 0 else { return }
        let error = api.error(handle)
        let message = api.errorText(handle, error).map { String(cString: $0) } ?? "an unknown error"
        throw QPDFError(description: "qpdf could not \(doing): \(message)")
    }
}

/// libqpdf's C functions, found by name in the library once loaded.
private final class API: @unchecked Sendable {
    typealias Data = OpaquePointer?
    typealias Handle = UInt32

    let initialize: @convention(c) () -> Data
    let cleanup: @convention(c) (UnsafeMutablePointer<Data>) -> Void
    let silenceErrors: @convention(c) (Data) -> Void
    let suppressWarnings: @convention(c) (Data, Int32) -> Void
    let read: @convention(c) (Data, UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Int32
    let hasError: @convention(c) (Data) -> Int32
    let error: @convention(c) (Data) -> OpaquePointer?
    let errorText: @convention(c) (Data, OpaquePointer?) -> UnsafePointer<CChar>?
    let initWrite: @convention(c) (Data, UnsafePointer<CChar>) -> Int32
    let write: @convention(c) (Data) -> Int32
    let root: @convention(c) (Data) -> Handle
    let pageCount: @convention(c) (Data) -> Int32
    let page: @convention(c) (Data, Int) -> Handle
    let makeIndirect: @convention(c) (Data, Handle) -> Handle
    let key: @convention(c) (Data, Handle, UnsafePointer<CChar>) -> Handle
    let replaceKey: @convention(c) (Data, Handle, UnsafePointer<CChar>, Handle) -> Void
    let isDictionary: @convention(c) (Data, Handle) -> Int32
    let isArray: @convention(c) (Data, Handle) -> Int32
    let isInteger: @convention(c) (Data, Handle) -> Int32
    let intValue: @convention(c) (Data, Handle) -> Int64
    let newDictionary: @convention(c) (Data) -> Handle
    let newArray: @convention(c) (Data) -> Handle
    let append: @convention(c) (Data, Handle, Handle) -> Void
    let name: @convention(c) (Data, UnsafePointer<CChar>) -> Handle
    let unicode: @convention(c) (Data, UnsafePointer<CChar>) -> Handle
    let integer: @convention(c) (Data, Int64) -> Handle
    let real: @convention(c) (Data, Double, Int32) -> Handle
    let objectID: @convention(c) (Data, Handle) -> Int32
    let isNull: @convention(c) (Data, Handle) -> Int32
    let arrayCount: @convention(c) (Data, Handle) -> Int32
    let arrayItem: @convention(c) (Data, Handle, Int32) -> Handle
    let pushInherited: @convention(c) (Data) -> Int32
    let number: @convention(c) (Data, Handle) -> Double
    let newStream: @convention(c) (Data) -> Handle
    let replaceStreamData: @convention(c) (Data, Handle, UnsafePointer<UInt8>?, Int, Handle, Handle) -> Void
    let null: @convention(c) (Data) -> Handle

    private static let lock = NSLock()
    nonisolated(unsafe) private static var loaded: Result<API, QPDFError>?

    static func shared() throws -> API {
        lock.lock()
        defer { lock.unlock() }
        if let loaded { return try loaded.get() }
        let result = Result { try API() }.mapError { $0 as? QPDFError ?? QPDFError(description: "\($0)") }
        loaded = result
        return try result.get()
    }

    private init() throws {
        var opened: UnsafeMutableRawPointer?
        for file in ["libqpdf.so.29", "libqpdf.so"] where opened == nil { opened = dlopen(file, RTLD_NOW | RTLD_LOCAL) }
        guard let library = opened else {
            throw QPDFError(
                description: "writing an outline or a note into a PDF needs libqpdf (apt-get install libqpdf29)")
        }
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let pointer = dlsym(library, name) else {
                throw QPDFError(description: "libqpdf has no \(name): it is older than margin needs (qpdf 10.6)")
            }
            return unsafeBitCast(pointer, to: type)
        }
        initialize = try symbol("qpdf_init", (@convention(c) () -> Data).self)
        cleanup = try symbol("qpdf_cleanup", (@convention(c) (UnsafeMutablePointer<Data>) -> Void).self)
        silenceErrors = try symbol("qpdf_silence_errors", (@convention(c) (Data) -> Void).self)
        suppressWarnings = try symbol("qpdf_set_suppress_warnings", (@convention(c) (Data, Int32) -> Void).self)
        read = try symbol(
            "qpdf_read", (@convention(c) (Data, UnsafePointer<CChar>, UnsafePointer<CChar>?) -> Int32).self)
        hasError = try symbol("qpdf_has_error", (@convention(c) (Data) -> Int32).self)
        error = try symbol("qpdf_get_error", (@convention(c) (Data) -> OpaquePointer?).self)
        errorText = try symbol(
            "qpdf_get_error_full_text", (@convention(c) (Data, OpaquePointer?) -> UnsafePointer<CChar>?).self)
        initWrite = try symbol("qpdf_init_write", (@convention(c) (Data, UnsafePointer<CChar>) -> Int32).self)
        write = try symbol("qpdf_write", (@convention(c) (Data) -> Int32).self)
        root = try symbol("qpdf_get_root", (@convention(c) (Data) -> Handle).self)
        pageCount = try symbol("qpdf_get_num_pages", (@convention(c) (Data) -> Int32).self)
        page = try symbol("qpdf_get_page_n", (@convention(c) (Data, Int) -> Handle).self)
        makeIndirect = try symbol("qpdf_make_indirect_object", (@convention(c) (Data, Handle) -> Handle).self)
        key = try symbol("qpdf_oh_get_key", (@convention(c) (Data, Handle, UnsafePointer<CChar>) -> Handle).self)
        replaceKey = try symbol(
            "qpdf_oh_replace_key", (@convention(c) (Data, Handle, UnsafePointer<CChar>, Handle) -> Void).self)
        isDictionary = try symbol("qpdf_oh_is_dictionary", (@convention(c) (Data, Handle) -> Int32).self)
        isArray = try symbol("qpdf_oh_is_array", (@convention(c) (Data, Handle) -> Int32).self)
        isInteger = try symbol("qpdf_oh_is_integer", (@convention(c) (Data, Handle) -> Int32).self)
        intValue = try symbol("qpdf_oh_get_int_value", (@convention(c) (Data, Handle) -> Int64).self)
        newDictionary = try symbol("qpdf_oh_new_dictionary", (@convention(c) (Data) -> Handle).self)
        newArray = try symbol("qpdf_oh_new_array", (@convention(c) (Data) -> Handle).self)
        append = try symbol("qpdf_oh_append_item", (@convention(c) (Data, Handle, Handle) -> Void).self)
        name = try symbol("qpdf_oh_new_name", (@convention(c) (Data, UnsafePointer<CChar>) -> Handle).self)
        unicode = try symbol(
            "qpdf_oh_new_unicode_string", (@convention(c) (Data, UnsafePointer<CChar>) -> Handle).self)
        integer = try symbol("qpdf_oh_new_integer", (@convention(c) (Data, Int64) -> Handle).self)
        real = try symbol("qpdf_oh_new_real_from_double", (@convention(c) (Data, Double, Int32) -> Handle).self)
        objectID = try symbol("qpdf_oh_get_object_id", (@convention(c) (Data, Handle) -> Int32).self)
        isNull = try symbol("qpdf_oh_is_null", (@convention(c) (Data, Handle) -> Int32).self)
        arrayCount = try symbol("qpdf_oh_get_array_n_items", (@convention(c) (Data, Handle) -> Int32).self)
        arrayItem = try symbol("qpdf_oh_get_array_item", (@convention(c) (Data, Handle, Int32) -> Handle).self)
        pushInherited = try symbol("qpdf_push_inherited_attributes_to_page", (@convention(c) (Data) -> Int32).self)
        number = try symbol("qpdf_oh_get_numeric_value", (@convention(c) (Data, Handle) -> Double).self)
        newStream = try symbol("qpdf_oh_new_stream", (@convention(c) (Data) -> Handle).self)
        replaceStreamData = try symbol(
            "qpdf_oh_replace_stream_data",
            (@convention(c) (Data, Handle, UnsafePointer<UInt8>?, Int, Handle, Handle) -> Void).self)
        null = try symbol("qpdf_oh_new_null", (@convention(c) (Data) -> Handle).self)
    }
}
