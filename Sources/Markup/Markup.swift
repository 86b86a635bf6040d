import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What went wrong reading markup, in words for a person.
public struct MarkupError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// HTML and XML read by libxml2 (loaded when first needed, through its C API's text reader:
/// no structure layouts assumed), as a flat list of nodes in document order. HTML is read the
/// way a browser would forgive it; XML strictly, with no network, no DTD and no entity: a file
/// that declares a DOCTYPE or refers to an entity is refused, so neither external entities
/// (XXE) nor entity expansion (a billion laughs) can happen.
public enum Markup {
    public enum Node: Equatable, Sendable {
        /// An element's start: its local name (lowercased for HTML), attributes by local name,
        /// and whether it is empty (`<br/>`, no end follows).
        case start(String, [String: String], empty: Bool)
        case text(String)
        case end(String)
    }

    /// The nodes of an HTML fragment or document (a Zotero note).
    public static func html(_ text: String) throws -> [Node] {
        let api = try API.shared()
        let options: Int32 = 1 | 32 | 64 | 2048  // recover, no errors, no warnings, no network
        let document = text.withCString { api.htmlRead($0, Int32(strlen($0)), nil, "UTF-8", options) }
        guard let document else { return [] }
        defer { api.freeDocument(document) }
        guard let reader = api.walker(document) else { throw MarkupError(description: "libxml2 could not read it") }
        defer { api.freeReader(reader) }
        return try nodes(reader, api: api, html: true)
    }

    /// The nodes of an XML document, read strictly: malformed XML, a DOCTYPE or an entity
    /// reference is an error that says where. `qualified`: names with their prefix
    /// (`dc:title`), else local names.
    public static func xml(_ data: Data, qualified: Bool = false) throws -> [Node] {
        // Said before libxml2 reads any of it (it would stop at the first entity instead).
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil {
            throw MarkupError(description: "it declares a DOCTYPE: documents with a DTD are not read")
        }
        let api = try API.shared()
        // No network; errors come back through the reader, not stderr. No NOENT, no DTDLOAD.
        let options: Int32 = 32 | 64 | 2048
        let reader = data.withUnsafeBytes { bytes in
            api.xmlRead(
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil, nil, options)
        }
        guard let reader else { throw MarkupError(description: "libxml2 could not read it") }
        defer { api.freeReader(reader) }
        return try nodes(reader, api: api, html: false, qualified: qualified)
    }

    private static func nodes(_ reader: OpaquePointer, api: API, html: Bool, qualified: Bool = false) throws
        -> [Node]
    {
        let name = qualified ? api.qualifiedName : api.localName
        var nodes = [Node]()
        func string(_ pointer: UnsafePointer<UInt8>?) -> String {
            pointer.map { String(cString: $0) } ?? ""
        }
        while true {
            let status = api.read(reader)
            if status == 0 { break }
            guard status == 1 else {
                throw MarkupError(description: "it is not well-formed XML (line \(api.line(reader)))")
            }
            switch api.nodeType(reader) {
            case 1:
                let element = string(name(reader))
                let empty = api.isEmpty(reader) == 1
                var attributes = [String: String]()
                while api.nextAttribute(reader) == 1 {
                    attributes[string(name(reader))] = string(api.value(reader))
                }
                nodes.append(.start(html ? element.lowercased() : element, attributes, empty: empty))
            case 3, 4, 13, 14:
                nodes.append(.text(string(api.value(reader))))
            case 15:
                let element = string(name(reader))
                nodes.append(.end(html ? element.lowercased() : element))
            case 5, 6:
                guard html else {
                    throw MarkupError(
                        description: "it refers to an entity (line \(api.line(reader))): entities are not read")
                }
            case 10:
                guard html else {
                    throw MarkupError(
                        description:
                            "it declares a DOCTYPE (line \(api.line(reader))): documents with a DTD are not read"
                    )
                }
            default:
                continue
            }
        }
        return nodes
    }
}

/// libxml2's text reader, bound by dlopen.
private final class API: @unchecked Sendable {
    typealias Document = OpaquePointer
    typealias Reader = OpaquePointer

    let htmlRead:
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Document?
    let xmlRead:
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Reader?
    let walker: @convention(c) (Document) -> Reader?
    let read: @convention(c) (Reader) -> Int32
    let nodeType: @convention(c) (Reader) -> Int32
    let localName: @convention(c) (Reader) -> UnsafePointer<UInt8>?
    let qualifiedName: @convention(c) (Reader) -> UnsafePointer<UInt8>?
    let value: @convention(c) (Reader) -> UnsafePointer<UInt8>?
    let isEmpty: @convention(c) (Reader) -> Int32
    let nextAttribute: @convention(c) (Reader) -> Int32
    let line: @convention(c) (Reader) -> Int32
    let freeReader: @convention(c) (Reader) -> Void
    let freeDocument: @convention(c) (Document) -> Void

    private static let lock = NSLock()
    nonisolated(unsafe) private static var loaded: Result<API, MarkupError>?

    static func shared() throws -> API {
        try lock.withLock {
            if let loaded { return try loaded.get() }
            let result = Result { try API() }.mapError { $0 as? MarkupError ?? MarkupError(description: "\($0)") }
            loaded = result
            return try result.get()
        }
    }

    private init() throws {
        var opened: UnsafeMutableRawPointer?
        for file in ["libxml2.so.2", "libxml2.so"] where opened == nil { opened = dlopen(file, RTLD_NOW | RTLD_LOCAL) }
        guard let library = opened else {
            throw MarkupError(description: "reading HTML and XML needs libxml2 (apt-get install libxml2)")
        }
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let pointer = dlsym(library, name) else {
                throw MarkupError(description: "libxml2 has no \(name): it is older than margin needs (2.9)")
            }
            return unsafeBitCast(pointer, to: type)
        }
        typealias Open =
            @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) ->
            OpaquePointer?
        htmlRead = try symbol("htmlReadMemory", Open.self)
        xmlRead = try symbol("xmlReaderForMemory", Open.self)
        walker = try symbol("xmlReaderWalker", (@convention(c) (Document) -> Reader?).self)
        read = try symbol("xmlTextReaderRead", (@convention(c) (Reader) -> Int32).self)
        nodeType = try symbol("xmlTextReaderNodeType", (@convention(c) (Reader) -> Int32).self)
        localName = try symbol("xmlTextReaderConstLocalName", (@convention(c) (Reader) -> UnsafePointer<UInt8>?).self)
        qualifiedName = try symbol("xmlTextReaderConstName", (@convention(c) (Reader) -> UnsafePointer<UInt8>?).self)
        value = try symbol("xmlTextReaderConstValue", (@convention(c) (Reader) -> UnsafePointer<UInt8>?).self)
        isEmpty = try symbol("xmlTextReaderIsEmptyElement", (@convention(c) (Reader) -> Int32).self)
        nextAttribute = try symbol("xmlTextReaderMoveToNextAttribute", (@convention(c) (Reader) -> Int32).self)
        line = try symbol("xmlTextReaderGetParserLineNumber", (@convention(c) (Reader) -> Int32).self)
        freeReader = try symbol("xmlFreeTextReader", (@convention(c) (Reader) -> Void).self)
        freeDocument = try symbol("xmlFreeDoc", (@convention(c) (Document) -> Void).self)
    }
}
