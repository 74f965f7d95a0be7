# deploy/terraform/main.tf: drive aquiferd with the stock Terraform google
# provider. aquiferd serves the netapp.googleapis.com/v1 REST surface under
# /v1/, so only the endpoint and the token change. See README.md.

terraform {
  required_version = ">= 1.5"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0, < 8.0"
    }
  }
}

variable "aquifer_endpoint" {
  description = "aquiferd's REST base, with the trailing /v1/ (the quickstart's; trust its CA with SSL_CERT_FILE=run/ca.crt)."
  type        = string
  default     = "https://127.0.0.1:8080/v1/"
}

variable "aquifer_token" {
  description = "Bearer token: the last line of `aquiferd token --db PATH --role editor --project PROJECT`."
  type        = string
  sensitive   = true
}

variable "project" {
  description = "Aquifer project ID (created by a cluster admin with POST /v1/projects?projectId=...)."
  type        = string
  default     = "demo"
}

variable "location" {
  description = "Aquifer location ID (created by a cluster admin with POST /v1/locations?locationId=...)."
  type        = string
  default     = "local"
}

provider "google" {
  project                = var.project
  region                 = var.location
  access_token           = var.aquifer_token
  netapp_custom_endpoint = var.aquifer_endpoint
  # Aquifer does not need Google's attribution label; leave it on if you like,
  # it is an ordinary label.
  add_terraform_attribution_label = false
}

resource "google_netapp_storage_pool" "pool" {
  name               = "tf-pool"
  location           = var.location
  service_level      = "PREMIUM"
  capacity_gib       = "2048"
  network            = "projects/${var.project}/global/networks/default"
  description        = "Storage pool managed by Terraform"
  qos_type           = "AUTO"
  allow_auto_tiering = true
  labels = {
    env = "dev"
  }
}

resource "google_netapp_volume" "volume" {
  name         = "tf-vol"
  location     = google_netapp_storage_pool.pool.location
  storage_pool = google_netapp_storage_pool.pool.name
  capacity_gib = "100"
  share_name   = "tf-vol"
  protocols    = ["NFSV3"]
  description  = "Volume managed by Terraform"
  labels = {
    env = "dev"
  }

  export_policy {
    rules {
      allowed_clients = "10.0.0.0/8"
      access_type     = "READ_WRITE"
      nfsv3           = true
      has_root_access = "true"
    }
  }

  tiering_policy {
    tier_action            = "ENABLED"
    cooling_threshold_days = 31
  }

  # Adds ?force=true to the delete request.
  deletion_policy = "FORCE"
}

output "pool_id" {
  value = google_netapp_storage_pool.pool.id
}

output "volume_id" {
  value = google_netapp_volume.volume.id
}

output "volume_mount_options" {
  value = google_netapp_volume.volume.mount_options
}
