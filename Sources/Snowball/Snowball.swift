import Foundation
import MarginCore

/// The Snowball stemmers (libstemmer, Debian's `libstemmer0d`) as the process's `Stemmer`.
///
/// The library is opened when the first word is stemmed, not when margin starts (most commands
/// never stem). A stemmer is not safe to share between threads: each language's is used under
/// its lock, a batch of words at a time.
public struct SnowballStemmer: Stemmer {
    public init() {}

    /// ISO 639-1 codes and the names libstemmer gives their algorithms.
    static let algorithms: [String: String] = [
        "da": "danish", "de": "german", "en": "english", "es": "spanish", "fi": "finnish", "fr": "french",
        "hu": "hungarian", "it": "italian", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
        "ru": "russian", "sv": "swedish", "tr": "turkish",
    ]

    public var languages: Set<String> {
        guard (try? Library.shared()) != nil else { return [] }
        return Set(Self.algorithms.keys)
    }

    public func stems(_ words: [String], language: String) -> [String]? {
        guard let name = Self.algorithms[language], let library = try? Library.shared(),
            let stemmer = library.stemmer(name)
        else { return nil }
        return stemmer.stems(words)
    }
}

/// The bound functions of libstemmer, and a stemmer per algorithm once asked for.
private final class Library: @unchecked Sendable {
    private let create: @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>?) -> OpaquePointer?
    fileprivate let stem: @convention(c) (OpaquePointer, UnsafePointer<UInt8>, Int32) -> UnsafePointer<UInt8>?
    fileprivate let length: @convention(c) (OpaquePointer) -> Int32
    private let lock = NSLock()
    private var made = [String: OneStemmer?]()

    private static let loaded: Result<Library, Error> = {
        for name in ["libstemmer.so.0d", "libstemmer.so.0", "libstemmer.so"] {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                return Result { try Library(handle) }
            }
        }
        return .failure(CocoaError(.featureUnsupported))
    }()

    static func shared() throws -> Library { try loaded.get() }

    private init(_ handle: UnsafeMutableRawPointer) throws {
        func bind<T>(_ name: String, as type: T.Type) throws -> T {
            guard let symbol = dlsym(handle, name) else { throw CocoaError(.featureUnsupported) }
            return unsafeBitCast(symbol, to: type)
        }
        create = try bind(
            "sb_stemmer_new", as: (@convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>?) -> OpaquePointer?).self)
        stem = try bind(
            "sb_stemmer_stem",
            as: (@convention(c) (OpaquePointer, UnsafePointer<UInt8>, Int32) -> UnsafePointer<UInt8>?).self)
        length = try bind("sb_stemmer_length", as: (@convention(c) (OpaquePointer) -> Int32).self)
    }

    /// The stemmer for an algorithm, made once (never freed: a handful a process).
    func stemmer(_ algorithm: String) -> OneStemmer? {
        lock.withLock {
            if let known = made[algorithm] { return known }
            let stemmer = create(algorithm, "UTF_8").map { OneStemmer(handle: $0, library: self) }
            made[algorithm] = stemmer
            return stemmer
        }
    }
}

/// One algorithm's stemmer, used by one thread at a time.
private final class OneStemmer: @unchecked Sendable {
    let handle: OpaquePointer
    unowned let library: Library
    private let lock = NSLock()

    init(handle: OpaquePointer, library: Library) {
        self.handle = handle
        self.library = library
    }

    func stems(_ words: [String]) -> [String] {
        lock.withLock {
            words.map { word in
                var word = word
                return word.withUTF8 { bytes -> String in
                    guard let base = bytes.baseAddress, bytes.count < 1 << 20,
                        let stemmed = library.stem(handle, base, Int32(bytes.count))
                    else { return String(decoding: bytes, as: UTF8.self) }
                    let count = Int(library.length(handle))
                    return String(decoding: UnsafeBufferPointer(start: stemmed, count: count), as: UTF8.self)
                }
            }
        }
    }
}
