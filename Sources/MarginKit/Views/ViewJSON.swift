import Foundation

/// How every view is written as JSON, by the CLI (`--json`, exports) and by the server's API
/// alike: keys sorted, slashes unescaped; pretty-printed for a person's terminal and files,
/// compact over HTTP. Lists of books and hits have a fast writer of the same bytes (`PrettyJSON`;
/// tests hold the two together).
public enum ViewJSON {
    public static func data<T: Encodable>(_ value: T, pretty: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
