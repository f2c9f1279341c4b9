"""Django's admin, for audit leads who are staff only, as read-only list views of the data. Every change
goes through the app's pages (which keep the audit trail); people are managed on the People pages."""

from django.contrib import admin

from annotations.models import Assignment, GoldLabel, Label
from audit import roles
from audit.models import Answer, Audit, Claim, HistoryEvent, ImportBatch, JudgeRun


class LeadAdminSite(admin.AdminSite):
    site_header = site_title = "Claim Audit admin (read-only)"
    index_title = "Data"

    def has_permission(self, request):
        user = request.user
        return user.is_active and user.is_staff and roles.has_role(user, roles.LEAD)


site = LeadAdminSite(name="admin")


class ReadOnly(admin.ModelAdmin):
    list_per_page = 50
    show_full_result_count = False  # one count query fewer on large tables

    def has_module_permission(self, request):
        return self.admin_site.has_permission(request)

    def has_view_permission(self, request, obj=None):
        return self.admin_site.has_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Answer, site=site)
class AnswerAdmin(ReadOnly):
    list_display = ("external_id", "dataset", "created_at", "length")
    list_filter = ("dataset",)
    list_select_related = ("dataset",)
    search_fields = ("external_id", "question")


@admin.register(Claim, site=site)
class ClaimAdmin(ReadOnly):
    list_display = ("id", "answer", "position", "text", "origin")
    list_filter = ("origin",)
    list_select_related = ("answer",)
    search_fields = ("text", "answer__external_id")


@admin.register(Audit, site=site)
class AuditAdmin(ReadOnly):
    list_display = ("name", "dataset", "status", "size", "allocation", "seed", "created_at", "closed_at")
    list_filter = ("status", "dataset")
    list_select_related = ("dataset",)
    search_fields = ("name",)


@admin.register(JudgeRun, site=site)
class JudgeRunAdmin(ReadOnly):
    list_display = ("id", "judge_version", "backend", "status", "audit", "claims_done", "cost_usd", "created_at")
    list_filter = ("status", "backend")
    list_select_related = ("judge_version", "audit")


@admin.register(Label, site=site)
class LabelAdmin(ReadOnly):
    list_display = ("id", "claim_id", "annotator", "verdict", "updated_at")
    list_filter = ("verdict",)
    list_select_related = ("assignment__annotator",)

    @admin.display(ordering="assignment__annotator__username")
    def annotator(self, obj):
        return obj.assignment.annotator.username


@admin.register(GoldLabel, site=site)
class GoldLabelAdmin(ReadOnly):
    list_display = ("id", "audit", "claim_id", "verdict", "source", "recheck", "version", "updated_at")
    list_filter = ("source", "verdict", "recheck")
    list_select_related = ("audit",)


@admin.register(Assignment, site=site)
class AssignmentAdmin(ReadOnly):
    list_display = ("id", "audit_answer", "slot", "annotator", "status", "submitted_at")
    list_filter = ("status",)
    list_select_related = ("audit_answer__audit", "audit_answer__answer", "annotator")


@admin.register(ImportBatch, site=site)
class ImportBatchAdmin(ReadOnly):
    list_display = ("id", "dataset", "file_name", "status", "created", "updated", "created_at")
    list_filter = ("status",)
    list_select_related = ("dataset",)


@admin.register(HistoryEvent, site=site)
class HistoryEventAdmin(ReadOnly):
    list_display = ("created_at", "kind", "action", "audit", "user", "person", "reason")
    list_filter = ("kind",)
    list_select_related = ("audit", "user", "person")
