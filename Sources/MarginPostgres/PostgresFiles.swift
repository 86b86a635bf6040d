import Crypto
import Foundation
import MarginCore
import PostgresNIO

/// The team's PDFs, content-addressed in the database (1 MiB chunks, one copy per SHA-256
/// whoever added it), with this machine's copies in a local cache: a file is fetched into the
/// cache the first time it is asked for. Removing a file removes the local copy only: another
/// machine's book may still need it.
struct PostgresFiles: BlobStore {
    let store: PostgresLibraryDatabase
    let local: any BlobStore
    static let chunk = 1 << 20

    var root: String { local.root }
    var temporaryFolder: String { local.temporaryFolder }
    /// The local copy's path, fetched from the database first when this machine hasn't it.
    func path(for sha256: String) -> String {
        if !local.contains(sha256) { _ = try? fetch(sha256) }
        return local.path(for: sha256)
    }

    /// The local copy's path, fetched (and checked against its SHA-256) from the database first
    /// when this machine hasn't it; bytes that don't hash to their name are an error.
    func checkedPath(for sha256: String) throws -> String {
        if !local.contains(sha256) { _ = try fetch(sha256) }
        return local.path(for: sha256)
    }
    func prepare() throws { try local.prepare() }
    func makeTemporaryFile(suffix: String) throws -> String { try local.makeTemporaryFile(suffix: suffix) }
    func removeStaleTemporaries() -> [String] { local.removeStaleTemporaries() }
    func remove(_ sha256: String) { local.remove(sha256) }

    /// Whether the file is here or in the database (it is fetched when its path is asked for).
    func contains(_ sha256: String) -> Bool {
        local.contains(sha256) || holds(sha256)
    }

    /// The files in this machine's cache: the others are fetched when their path is asked for.
    func cachedHere(_ sha256s: [String]) -> Set<String> { local.cachedHere(sha256s) }

    /// Whether the database has the file, whatever this machine's cache has.
    func holds(_ sha256: String) -> Bool {
        guard let database = try? store.files() else { return false }
        var binds = PostgresBindings()
        binds.append(sha256)
        let found = try? database.transaction(readOnly: true) {
            try database.run("SELECT 1 FROM file WHERE sha256 = $1", binds).rows.first != nil
        }
        return found == true
    }

    /// Uploads the staged file unless the database has it, then keeps it in the local cache.
    func place(_ staged: String, sha256: String) throws -> Bool {
        let added = try upload(staged, sha256: sha256)
        _ = try local.place(staged, sha256: sha256)
        return added
    }

    private func upload(_ path: String, sha256: String) throws -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw MarginError.io("cannot read \(path) to store it in the library")
        }
        defer { try? handle.close() }
        let database = try store.files()
        return try database.transaction(readOnly: false) {
            var binds = PostgresBindings()
            binds.append(sha256)
            let size = Int64((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
            binds.append(size)
            let insert =
                "INSERT INTO file (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING RETURNING sha256"
            var inserted = try database.run(insert, binds).rows.first != nil
            if !inserted {
                // Stored already: under its name, the right bytes? Others are dropped and replaced
                // (someone may have stored other bytes under the name of a PDF before it was added).
                var name = PostgresBindings()
                name.append(sha256)
                let dropped =
                    try database.run("SELECT margin.drop_unverified_file($1)", name).rows.first?.decode(Bool.self)
                    ?? false
                guard dropped else { return false }
                inserted = try database.run(insert, binds).rows.first != nil
                guard inserted else { return false }
            }
            var number = 0
            while let data = try handle.read(upToCount: Self.chunk), !data.isEmpty {
                var chunk = PostgresBindings()
                chunk.append(sha256)
                chunk.append(Int64(number))
                chunk.append(ByteBuffer(bytes: data))
                try database.run("INSERT INTO file_chunk (sha256, n, data) VALUES ($1, $2, $3)", chunk)
                number += 1
            }
            return true
        }
    }

    /// Writes the file from the database into the local cache; false when the database hasn't it.
    private func fetch(_ sha256: String) throws -> Bool {
        let temporary = try local.makeTemporaryFile(suffix: ".fetch")
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let database = try store.files()
        let found = try database.transaction(readOnly: true) { () throws -> Bool in
            var binds = PostgresBindings()
            binds.append(sha256)
            guard try database.run("SELECT bytes FROM file WHERE sha256 = $1", binds).rows.first != nil else {
                return false
            }
            guard let handle = FileHandle(forWritingAtPath: temporary) else { return false }
            defer { try? handle.close() }
            var hasher = SHA256()
            for row in try database.run("SELECT data FROM file_chunk WHERE sha256 = $1 ORDER BY n", binds).rows {
                let data = Data(try row.decode(ByteBuffer.self).readableBytesView)
                hasher.update(data: data)
                try handle.write(contentsOf: data)
            }
            // Content-addressed means verified: bytes that don't hash to their name are never
            // placed in the cache or read.
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            guard digest == sha256 else { throw MarginError.corruptStoredFile(sha256: sha256, found: digest) }
            return true
        }
        guard found else { return false }
        _ = try local.place(temporary, sha256: sha256)
        return true
    }
}

extension PostgresLibraryDatabase: FileKeepingStore {
    public var fileKeeper: (any FileKeepingStore)? { self }

    public func blobStore(caching local: any BlobStore) -> any BlobStore {
        PostgresFiles(store: self, local: local)
    }

    public func pruneFiles(olderThan age: TimeInterval) throws -> [(sha256: String, bytes: Int64)] {
        let database = try files()
        var binds = PostgresBindings()
        binds.append(age)
        return try database.transaction(readOnly: false) {
            // Through the library's function: members can't delete stored files themselves.
            try database.run("SELECT sha256, bytes FROM margin.prune_files($1)", binds).rows.map { row in
                let columns = row.makeRandomAccess()
                return (try columns[0].decode(String.self), try columns[1].decode(Int64.self))
            }
        }
    }
}
