import Foundation

/// The content-addressed store of PDFs: a file per SHA-256, reached only by an atomic move of a
/// complete, checked temporary file. The use cases keep files only through this port (the
/// folder implementation is `ContentStore` in MarginKit).
public protocol BlobStore: Sendable {
    /// The folder the store lives in (the cache).
    var root: String { get }
    /// Where files being written wait (downloads, copies).
    var temporaryFolder: String { get }
    /// The path the file with this SHA-256 has (whether or not it is there).
    func path(for sha256: String) -> String
    /// Whether the store holds the file with this SHA-256.
    func contains(_ sha256: String) -> Bool
    /// Whether the library itself holds it, not only this machine's copy of it (a team library's
    /// PDFs are in its database: a copy cached here may be of a database since dropped).
    func holds(_ sha256: String) -> Bool
    /// Which of these SHA-256s this machine has at hand now, fetching none (a list of books asks
    /// for each of its books): a team library's PDFs are in its database and come to this
    /// machine's cache when their path is asked for, so a book's view (`cached`, `file`) is read
    /// from the cache as it is, never by fetching every PDF.
    func cachedHere(_ sha256s: [String]) -> Set<String>
    /// Creates the store's folders.
    func prepare() throws
    /// A new, empty temporary file.
    func makeTemporaryFile(suffix: String) throws -> String
    /// Removes what processes that are gone left among the temporaries; returns the paths.
    @discardableResult func removeStaleTemporaries() -> [String]
    /// Moves a staged file to its address; true when the store did not have it before.
    func place(_ staged: String, sha256: String) throws -> Bool
    /// Removes the file with this SHA-256, if any.
    func remove(_ sha256: String)
    /// `path(for:)`, where fetching the file from elsewhere can fail: bytes that don't hash to
    /// `sha256` are `MarginError.corruptStoredFile`, never placed.
    func checkedPath(for sha256: String) throws -> String
}

extension BlobStore {
    public func checkedPath(for sha256: String) throws -> String { path(for: sha256) }

    public func cachedHere(_ sha256s: [String]) -> Set<String> { Set(sha256s.filter(contains)) }

    public func holds(_ sha256: String) -> Bool { contains(sha256) }

    /// A new, empty temporary file for a partial download or copy.
    public func makeTemporaryFile() throws -> String { try makeTemporaryFile(suffix: ".part") }
}

/// A store that keeps the PDFs itself (a shared database): the library's files go through the
/// blob store it makes over a local cache, which holds the copies this machine has fetched.
public protocol FileKeepingStore {
    func blobStore(caching local: any BlobStore) -> any BlobStore
    /// Removes the stored files no book or version uses that were stored more than `age`
    /// seconds ago (a younger one may belong to a book another client is adding right now);
    /// returns their SHA-256s and sizes.
    func pruneFiles(olderThan age: TimeInterval) throws -> [(sha256: String, bytes: Int64)]
}
