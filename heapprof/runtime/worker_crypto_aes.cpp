// Web Crypto's AES-GCM, AES-CBC and AES-CTR in OpenSSL.
#include "heapprof/runtime/worker_crypto.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/worker_crypto_util.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

using namespace crypto;  // the helpers every crypto native uses

namespace {

const EVP_CIPHER* AesCipher(std::string_view mode, size_t key_bytes) {
  if (mode == "GCM") {
    return key_bytes == 16   ? EVP_aes_128_gcm()
           : key_bytes == 24 ? EVP_aes_192_gcm()
           : key_bytes == 32 ? EVP_aes_256_gcm()
                             : nullptr;
  }
  if (mode == "CBC") {
    return key_bytes == 16   ? EVP_aes_128_cbc()
           : key_bytes == 24 ? EVP_aes_192_cbc()
           : key_bytes == 32 ? EVP_aes_256_cbc()
                             : nullptr;
  }
  if (mode == "CTR") {
    return key_bytes == 16   ? EVP_aes_128_ctr()
           : key_bytes == 24 ? EVP_aes_192_ctr()
           : key_bytes == 32 ? EVP_aes_256_ctr()
                             : nullptr;
  }
  return nullptr;
}

// One CTR pass over `data` from counter block `iv`, appended to `out`.
bool CtrPass(const EVP_CIPHER* cipher, std::string_view key, const unsigned char* iv, std::string_view data,
             std::vector<unsigned char>* out) {
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  size_t at = out->size();
  out->resize(at + data.size());
  int length = 0;
  return ctx != nullptr && EVP_EncryptInit_ex(ctx.get(), cipher, nullptr, Bytes(key), iv) == 1 &&
         EVP_EncryptUpdate(ctx.get(), out->data() + at, &length, Bytes(data), static_cast<int>(data.size())) == 1;
}

}  // namespace

void CryptoAes(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string mode = StringArgument(info, 0);
  bool encrypt = info[1]->BooleanValue(isolate);
  std::string_view key;
  std::string_view iv;
  std::string_view data;
  std::string_view aad;
  if (!BytesArgument(info, 2, &key) || !BytesArgument(info, 3, &iv) || !BytesArgument(info, 4, &data) ||
      (mode == "GCM" && !BytesArgument(info, 5, &aad))) {
    return;
  }
  auto tag_bytes = static_cast<size_t>(CountArgument(info, 6));
  const EVP_CIPHER* cipher = AesCipher(mode, key.size());
  if (cipher == nullptr) {
    Throw(isolate, "OperationError", "no AES-" + mode + " cipher for this key");
    return;
  }
  std::vector<unsigned char> out;
  const std::string failed =
      "Decryption failed. This could be due to a ciphertext authentication failure, bad padding, incorrect "
      "CryptoKey, or another algorithm-specific reason.";
  if (mode == "CTR") {
    // Only the counter block's rightmost `counterBits` bits count up and wrap;
    // OpenSSL carries into all 128, so a pass that would wrap is cut in two.
    int counter_bits = CountArgument(info, 7);
    if (iv.size() != 16 || counter_bits < 1 || counter_bits > 128) {
      Throw(isolate, "OperationError", "bad AES-CTR counter");
      return;
    }
    unsigned char block[16];
    std::memcpy(block, iv.data(), 16);
    unsigned __int128 counter = 0;
    for (unsigned char byte : block) counter = (counter << 8) | byte;
    unsigned __int128 blocks = (data.size() + 15) / 16;
    if (counter_bits < 128) {
      unsigned __int128 range = static_cast<unsigned __int128>(1) << counter_bits;
      unsigned __int128 low = counter & (range - 1);
      if (blocks > range) {
        Throw(isolate, "OperationError", "AES-CTR would reuse its counter for this much data");
        return;
      }
      if (low + blocks > range) {
        size_t first = static_cast<size_t>(range - low) * 16;
        bool ok = CtrPass(cipher, key, block, data.substr(0, first), &out);
        unsigned __int128 wrapped = counter & ~(range - 1);
        for (int i = 15; i >= 0; --i, wrapped >>= 8) block[i] = static_cast<unsigned char>(wrapped & 0xff);
        if (!ok || !CtrPass(cipher, key, block, data.substr(first), &out)) {
          Throw(isolate, "OperationError", "OpenSSL's AES-CTR failed");
          return;
        }
        info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
        return;
      }
    }
    if (!CtrPass(cipher, key, block, data, &out)) {
      Throw(isolate, "OperationError", "OpenSSL's AES-CTR failed");
      return;
    }
    info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
    return;
  }
  bool gcm = mode == "GCM";
  if (gcm && !encrypt && data.size() < tag_bytes) {
    Throw(isolate, "OperationError", failed);
    return;
  }
  std::string_view tag = gcm && !encrypt ? data.substr(data.size() - tag_bytes) : std::string_view();
  std::string_view body = gcm && !encrypt ? data.substr(0, data.size() - tag_bytes) : data;
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  int length = 0;
  bool ok =
      ctx != nullptr && EVP_CipherInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1 &&
      (!gcm || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) == 1) &&
      EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), Bytes(iv), -1) == 1 &&
      (aad.empty() || EVP_CipherUpdate(ctx.get(), nullptr, &length, Bytes(aad), static_cast<int>(aad.size())) == 1);
  out.resize(body.size() + 16 + tag_bytes);
  int written = 0;
  ok = ok && EVP_CipherUpdate(ctx.get(), out.data(), &written, Bytes(body), static_cast<int>(body.size())) == 1;
  if (ok && !tag.empty()) {
    // OpenSSL reads the expected tag from a mutable buffer.
    std::string expected(tag);
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(expected.size()), expected.data()) == 1;
  }
  int tail = 0;
  ok = ok && EVP_CipherFinal_ex(ctx.get(), out.data() + written, &tail) == 1;
  if (!ok) {
    Throw(isolate, "OperationError", encrypt ? "OpenSSL's AES-" + mode + " encryption failed" : failed);
    return;
  }
  written += tail;
  if (gcm && encrypt) {
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), out.data() + written) != 1) {
      Throw(isolate, "OperationError", "OpenSSL's AES-GCM gave no tag");
      return;
    }
    written += static_cast<int>(tag_bytes);
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), written));
}

}  // namespace heapprof::internal
