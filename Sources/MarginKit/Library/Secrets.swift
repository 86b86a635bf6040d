import Crypto
import Foundation
import MarginCore

/// Seals the passwords of encrypted PDFs before they are stored, with a key kept in a user-only
/// file apart from the library (AES-GCM). The column then holds nil (not encrypted), "" (an
/// encrypted PDF that opens without a password: owner password only), or "sealed:…".
///
/// A team library's database is shared, so it holds no password at all, not even sealed: its
/// column says "local", and each user keeps the sealed password in a file of their own
/// (`keyring`, by the SHA-256 of the PDF), given once with `margin edit BOOK --password`.
struct Secrets: Sendable {
    let keyFile: String
    /// The user's own passwords for a team library's PDFs; nil for a personal library.
    let keyring: String?
    static let prefix = "sealed:"
    /// What a team library stores for a PDF that needs a password.
    static let kept = "local"

    /// The stored form of a password for the PDF with this SHA-256.
    func seal(_ password: String, sha256: String) throws -> String {
        guard !password.isEmpty else { return "" }
        let box = try AES.GCM.seal(Data(password.utf8), using: try key(create: true))
        guard let combined = box.combined else { throw MarginError.io("cannot seal the password") }
        let sealed = Self.prefix + combined.base64EncodedString()
        guard let keyring else { return sealed }
        var passwords = readKeyring(keyring)
        passwords[sha256] = sealed
        let data = try JSONEncoder().encode(passwords)
        try writeAtomically(to: keyring, force: true, check: .bytes(data.count)) { try writeData(data, to: $0) }
        return Self.kept
    }

    /// The password to open a PDF with, from its stored form (nil for none). A password stored
    /// in the clear by an older margin is used as it is.
    func reveal(_ stored: String?, title: String, sha256: String) throws -> String? {
        guard var stored, !stored.isEmpty else { return nil }
        if stored == Self.kept {
            guard let keyring, let sealed = readKeyring(keyring)[sha256] else {
                throw MarginError.passwordNotKept(title: title)
            }
            stored = sealed
        }
        guard stored.hasPrefix(Self.prefix) else { return stored }
        guard let data = Data(base64Encoded: String(stored.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: data),
            let key = try? key(create: false),
            let plain = try? AES.GCM.open(box, using: key)
        else {
            throw MarginError.passwordUnavailable(title: title, keyFile: keyFile)
        }
        return String(decoding: plain, as: UTF8.self)
    }

    private func readKeyring(_ path: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    }

    private func key(create: Bool) throws -> SymmetricKey {
        if let data = FileManager.default.contents(atPath: keyFile), data.count == 32 {
            return SymmetricKey(data: data)
        }
        guard create else { throw MarginError.passwordUnavailable(title: "", keyFile: keyFile) }
        try makeFolder((keyFile as NSString).deletingLastPathComponent)
        let key = SymmetricKey(size: .bits256)
        let data = key.withUnsafeBytes { Data($0) }
        let temporary = keyFile + ".\(getpid())"
        try writeData(data, to: temporary)
        // Another process may have made one meanwhile: the first one in place wins.
        if link(temporary, keyFile) != 0 {
            unlink(temporary)
            guard let existing = FileManager.default.contents(atPath: keyFile), existing.count == 32 else {
                throw MarginError.io("cannot create the key file \(keyFile)")
            }
            return SymmetricKey(data: existing)
        }
        unlink(temporary)
        return key
    }
}

extension Library {
    var secrets: Secrets {
        Secrets(
            keyFile: paths.keyFile,
            keyring: paths.location.isServer
                ? (paths.keyFile as NSString).deletingLastPathComponent + "/team-passwords.json" : nil)
    }

    /// The password that opens the book's PDF (nil for none).
    func password(of book: Book) throws -> String? {
        try secrets.reveal(book.password, title: book.title, sha256: book.sha256)
    }

    /// Sets the password that opens a book's PDF, checking it on the cached file first.
    public func setPassword(_ book: Book, _ password: String) async throws -> BookInfo {
        let path = try await ensureCached(book)
        do {
            _ = try PDFEngines.current.open(path: path, password: password)
        } catch {
            throw MarginError.wrongPassword(book.title)
        }
        let sealed = try secrets.seal(password, sha256: book.sha256)
        let updated = try await database.updateBook(id: book.id ?? -1, addTags: [], removeTags: [], now: Date()) {
            current in
            current.password = sealed.isEmpty ? (current.password == nil ? nil : "") : sealed
        }
        return try await info(updated)
    }
}
