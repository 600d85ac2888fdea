// DOMException (WebIDL), with workerd's layout.

// The legacy codes of DOMException's names (WebIDL), as constants on the
// class and its prototype and as an instance's `code` (0 for other names).
const domExceptionCodes = [
  ['IndexSizeError', 'INDEX_SIZE_ERR'], ['DOMStringSizeError', 'DOMSTRING_SIZE_ERR'],
  ['HierarchyRequestError', 'HIERARCHY_REQUEST_ERR'], ['WrongDocumentError', 'WRONG_DOCUMENT_ERR'],
  ['InvalidCharacterError', 'INVALID_CHARACTER_ERR'], ['NoDataAllowedError', 'NO_DATA_ALLOWED_ERR'],
  ['NoModificationAllowedError', 'NO_MODIFICATION_ALLOWED_ERR'], ['NotFoundError', 'NOT_FOUND_ERR'],
  ['NotSupportedError', 'NOT_SUPPORTED_ERR'], ['InUseAttributeError', 'INUSE_ATTRIBUTE_ERR'],
  ['InvalidStateError', 'INVALID_STATE_ERR'], ['SyntaxError', 'SYNTAX_ERR'],
  ['InvalidModificationError', 'INVALID_MODIFICATION_ERR'], ['NamespaceError', 'NAMESPACE_ERR'],
  ['InvalidAccessError', 'INVALID_ACCESS_ERR'], ['ValidationError', 'VALIDATION_ERR'],
  ['TypeMismatchError', 'TYPE_MISMATCH_ERR'], ['SecurityError', 'SECURITY_ERR'], ['NetworkError', 'NETWORK_ERR'],
  ['AbortError', 'ABORT_ERR'], ['URLMismatchError', 'URL_MISMATCH_ERR'], ['QuotaExceededError', 'QUOTA_EXCEEDED_ERR'],
  ['TimeoutError', 'TIMEOUT_ERR'], ['InvalidNodeTypeError', 'INVALID_NODE_TYPE_ERR'], ['DataCloneError', 'DATA_CLONE_ERR'],
];
const domExceptionCode = new Map(domExceptionCodes.map(([name], i) => [name, i + 1]));
class DOMException extends Error {
  // name and code are the instance's own read-only properties, as in workerd.
  constructor(message = '', name = 'Error') {
    super(message);
    const text = String(name);
    Object.defineProperty(this, 'code', { value: domExceptionCode.get(text) || 0, enumerable: true, configurable: true });
    Object.defineProperty(this, 'name', { value: text, enumerable: true, configurable: true });
  }
}
domExceptionCodes.forEach(([, constant], i) => {
  const property = { value: i + 1, enumerable: true, configurable: true };
  Object.defineProperty(DOMException, constant, property);
  Object.defineProperty(DOMException.prototype, constant, property);
});

export { DOMException };
