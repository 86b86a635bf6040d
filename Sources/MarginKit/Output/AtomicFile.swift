import Foundation

/// Writes a file so that it is either complete or absent: `write` fills a temporary file beside
/// the target, which is then renamed over it. An existing target is refused unless `force`.
/// Returns the absolute path written.
@discardableResult
public func writeAtomically(to path: String, force: Bool, _ write: (String) throws -> Void) throws -> String {
    let target = URL(fileURLWithPath: path).standardizedFileURL.path
    let folder = (target as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) {
        if isDirectory.boolValue { throw MarginError.invalidArgument("\(path) is a folder; give a file name") }
        if !force { throw MarginError.invalidArgument("\(path) already exists; use --force to overwrite it") }
    }
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw MarginError.io("cannot write \(path): the folder \(folder) does not exist")
    }
    guard access(folder, W_OK) == 0 else {
        throw MarginError.io("cannot write \(path): the folder \(folder) is not writable")
    }
    let temporary = folder + "/." + (target as NSString).lastPathComponent + ".margin-" + UUID().uuidString.prefix(8).lowercased()
    do {
        try write(temporary)
        guard rename(temporary, target) == 0 else {
            throw MarginError.io("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    } catch {
        try? FileManager.default.removeItem(atPath: temporary)
        throw error
    }
    return target
}

/// A file-name-safe form of a title: lowercase ASCII letters and digits joined by dashes.
public func slug(_ title: String, maxLength: Int = 60) -> String {
    let folded = title.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
    var result = ""
    var dash = false
    for scalar in folded.unicodeScalars {
        if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
            if dash && !result.isEmpty { result.append("-") }
            result.unicodeScalars.append(scalar)
            dash = false
        } else {
            dash = true
        }
        if result.count >= maxLength { break }
    }
    return result.isEmpty ? "book" : result
}
