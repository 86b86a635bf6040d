import Foundation

/// Columns `text` takes on a terminal: glibc's wcwidth for each scalar (two for Hangul, CJK and
/// full-width forms, none for combining marks), in a UTF-8 locale set for it once.
public func displayWidth(_ text: String) -> Int {
    if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
    return text.unicodeScalars.reduce(0) { $0 + scalarWidth($1) }
}

/// glibc's `wcwidth` (which Swift's Glibc module leaves out), in a UTF-8 locale; nil where
/// either is missing (then a scalar counts one column).
private let wcwidthFunction: (@convention(c) (Int32) -> Int32)? = {
    guard setlocale(LC_CTYPE, "C.UTF-8") != nil, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "wcwidth")
    else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
}()

public func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
    if scalar.value < 0x80 { return 1 }
    guard let wcwidth = wcwidthFunction else { return 1 }
    let width = wcwidth(Int32(bitPattern: scalar.value))
    return width < 0 ? 1 : Int(width)
}
