import Crypto
import Foundation
import MarginCore
import Poppler

/// Seals the passwords of encrypted PDFs before they are stored, with a key kept in a user-only
/// file apart from the library (AES-GCM). The column then holds nil (not encrypted), "" (an
/// encrypted PDF that opens without a password: owner password only), or "sealed:…".
struct Secrets: Sendable {
    let keyFile: String
    static let prefix = "sealed:"

    /// The stored form of a password.
    func seal(_ password: String) throws -> String {
        guard !password.isEmpty else { return "" }
        let box = try AES.GCM.seal(Data(password.utf8), using: try key(create: true))
        guard let combined = box.combined else { throw MarginError.io("cannot seal the password") }
        return Self.prefix + combined.base64EncodedString()
    }

    /// The password to open a PDF with, from its stored form (nil for none). A password stored
    /// in the clear by an older margin is used as it is.
    func reveal(_ stored: String?, title: String) throws -> String? {
        guard let stored, !stored.isEmpty else { return nil }
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
    var secrets: Secrets { Secrets(keyFile: paths.keyFile) }

    /// The password that opens the book's PDF (nil for none).
    func password(of book: Book) throws -> String? {
        try secrets.reveal(book.password, title: book.title)
    }

    /// Sets the password that opens a book's PDF, checking it on the cached file first.
    public func setPassword(_ book: Book, _ password: String) async throws -> BookInfo {
        let path = try await ensureCached(book)
        do {
            _ = try Poppler.Document(path: path, password: password)
        } catch {
            throw MarginError.wrongPassword(book.title)
        }
        let sealed = try secrets.seal(password)
        let updated = try await database.updateBook(id: book.id ?? -1, addTags: [], removeTags: [], now: Date()) {
            current in
            current.password = sealed.isEmpty ? (current.password == nil ? nil : "") : sealed
        }
        return try await info(updated)
    }
}
