"""The names a signature in ``signatures.json`` may use: the host facts it asks about, the facts
computed for it from the knowledge base or carried by an extracted-fact trigger, and the checks of
the text's facts that contradict or confirm its cause. The catalogue rejects any other name."""

from __future__ import annotations

__all__ = ["CONFIRMATIONS", "CONTRADICTIONS", "HOST_FACT_KINDS", "KB_FACTS", "TRIGGER_FACTS"]

# What a signature may ask to be told about the machine (rendered by explain.host).
HOST_FACT_KINDS = frozenset({
    "apple", "container", "driver", "glibc", "gpus", "jetson", "ld_library_path", "platform", "python",
    "rocm", "system_libraries", "toolkits", "visible_devices", "wsl",
})

# Facts computed from the knowledge base (explain.context), usable as placeholders when listed.
KB_FACTS = frozenset({"gpu_capability", "arch_last_release", "arch_never_released", "arch_toolkit",
                      "conda_channel_last", "torch_stable_html_last",
                      "unknown_torch_release"})


# Facts a signature fired by an extracted fact carries (explain.triggers).
TRIGGER_FACTS = frozenset({"lib", "error", "symbol", "toolkit_cuda", "path", "package", "why", "channels",
                           "subdir", "versions", "message", "meaning", "what", "requested", "requirement",
                           "gpu", "vendor_library", "code", "module", "declared", "visible", "gpu_name",
                           "capability", "extension_call"})
# Evidence in a text against a signature's cause (explain.reason.CONTRADICTION_CHECKS).
CONTRADICTIONS = frozenset({"arch_present", "driver_enough", "virtual_cuda_enough", "cuda_build_shown",
                            "torch_gpu_build_shown",
                            "importer_not_torch", "on_wsl", "nvidia_gpu_only", "amd_gpu_only",
                            "op_on_gpu", "oom_not_workload", "path_within_max_path",
                            "gpu_without_tf32", "gpu_below_build", "cuda_error_shown", "gpu_with_bf16",
                            "loopback_peer_on_one_node", "torch_unusable_here",
                            "bf16_emulated_by_torch", "bf16_query_not_on_cuda", "wheel_for_this_python",
                            "wheel_not_for_this_python", "sbsa_jetson_shown",
                            "triton_name_not_torchs", "sdpa_refusal_caught",
                            "ptxas_not_tritons", "gpu_illegal_instruction", "arch_name_never_compiled",
                            "other_container_tool_shown", "compile_targets_chosen", "lib64_links_to_lib",
                            "option_is_host_compilers", "module_looked_up_in_image",
                            "nvcc_looked_up_without_build", "build_went_past_compiler_check",
                            "symbol_not_torchs", "space_exhausted_outside_install",
                            "driver_beyond_found", "nvcc_not_older_than_arch",
                            "nvcc_not_newer_than_arch", "glibc_shown_new_enough",
                            "fp8_format_of_other_vendor", "gpu_newer_than_hopper",
                            "mkl_symbol_not_ittnotify", "refused_on_one_node",
                            "xformers_built_for_this_torch", "torch_cpu_build_shown", "rocm_torch_shown",
                            "pins_agree", "cl_looked_up_without_build", "nvrtc_knows_gpu",
                            "pip_older_than_wheel_tag", "cuda_init_failure_shown",
                            "tensorrt_dropped_gpu", "driver_symbol_in_every_driver", "compiler_error_shown",
                            "header_shipped_by_this_torch", "torch_from_conda_env", "apex_not_installed",
                            "aio_warning_beside_other_failure", "bnb_binary_found_needs_library",
                            "operand_not_a_pickle_opcode", "conda_cuda_overridden",
                            "pytorch_channel_not_searched", "secure_boot_shown_disabled",
                            "project_on_that_pytorch_index", "built_on_macos", "published_wheel_refused",
                            "ffmpeg_shown_installed", "all_nvidia_nodes_missing", "libpython_of_other_python",
                            "no_driver_beside_stub", "driver_meets_image_cuda", "gcc_before_13_shown",
                            "torch_import_itself_failed", "driver_mismatch_shown", "failed_after_build",
                            "python_ranges_disjoint"})
# Evidence a signature's cause needs from the text (explain.confirmations, and reason.CONFIRMATION_CHECKS).
CONFIRMATIONS = frozenset({"exclusive_mode_shown", "oom_kill_shown", "killed_in_image_build",
                           "overflow_shown", "shm_full_shown", "launcher_env_moved",
                           "docker_default_shm_shown", "channel_known_upstream",
                           "tf32_gpu_shown", "build_lacks_arch",
                           "binary_compatible_gpu", "macos_below_mps_minimum",
                           "download_damaged_shown", "fresh_download_complete_shown",
                           "requested_after_torch_stable_html", "async_allocator_unsupported_gpu",
                           "resolver_reported_conflict", "disjoint_torch_requirements",
                           "gpu_below_build", "apple_silicon_shown",
                           "address_not_a_host", "hip_memory_below_listed_gpus",
                           "rocm_build_lacks_gfx", "other_vendor_gpu_only",
                           "torch_without_cuda_by_design", "hsa_override_not_this_gpu",
                           "toolkit_other_major_shown", "both_onnxruntime_packages_shown",
                           "ffmpeg_major_not_supported", "cpp_extension_arch_added_later",
                           "gpu_newer_than_build_cuda", "torch_build_carries_gpu",
                           "extension_own_wording", "extension_checked_call", "compiled_module_absence_shown",
                           "dll_needs_only_vc_runtime", "other_copy_loaded", "numpy_two_shown"})
